// Placeholder translation unit: the Highway engine lands with the fast-engine issue.
namespace qscheme::fast {}
