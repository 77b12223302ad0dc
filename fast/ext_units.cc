#include "fast/ext_units.hpp"

namespace qscheme::fast::detail {

bool ext_units(const Scheme&, const Layout&, const float*, const Point&, const ExtOutput&) { return false; }

}  // namespace qscheme::fast::detail
