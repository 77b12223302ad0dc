// Large buffers of the command line (a tensor read from .npy, the bytes written or read back)
// on 2 MiB pages. On the VM this was measured on, the first touch of each 4 KiB page of a fresh
// buffer cost about 15 us: `qscheme quantize` of a 64 MiB tensor spent most of its 0.3 s there,
// and 0.07 s with the buffers on huge pages (docs/PERFORMANCE.md, "First calls"). The kernel
// takes the advice where transparent huge pages are enabled for madvise (or always); elsewhere
// nothing changes.
#pragma once

#include <cstddef>
#include <vector>

namespace qscheme::io {

// Advises the whole 2 MiB pages inside [p, p + bytes) onto huge pages, before they are touched.
void advise_huge_pages(void* p, std::size_t bytes);

// v.resize(n), with v's storage advised onto huge pages before resize touches it: for a buffer
// that starts empty (reserve allocates without touching; resize then zero-fills).
template <class T>
void resize_on_huge_pages(std::vector<T>& v, std::size_t n) {
  if (v.empty() && n * sizeof(T) >= (std::size_t{4} << 20)) {
    v.reserve(n);
    advise_huge_pages(v.data(), v.capacity() * sizeof(T));
  }
  v.resize(n);
}

}  // namespace qscheme::io
