// Progress of long oracle work (verify, vectors, check's search), for a caller that shows it:
// `done` of `total` units, called from the working thread, at most once a unit. An empty
// function shows nothing.
#pragma once

#include <cstdint>
#include <functional>

namespace qscheme::oracle {

using Progress = std::function<void(std::uint64_t done, std::uint64_t total)>;

}  // namespace qscheme::oracle
