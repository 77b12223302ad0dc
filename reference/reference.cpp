// Placeholder translation unit: the exact engine lands with the reference issue.
namespace qscheme::reference {}
