// The diagnosis of `qscheme check`: which point of the rule space reproduces a candidate. The
// points tried are the named recipes (scheme/recipes.hpp), then each recipe with one rule
// changed (every other choice of every field of scheme/rules.hpp that validate_rules accepts for
// the request), then with two, nearest recipe first. The tensor work is the caller's (a Judge);
// this file only enumerates, orders, prunes and names points, within a fixed budget.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "oracle/progress.hpp"
#include "scheme/quantized.hpp"
#include "scheme/rules.hpp"
#include "scheme/scheme.hpp"

namespace qscheme::oracle {

// One field of Rules changed, or (field == rule_fields().size()) the packing order of sub-byte
// codes reversed, which only a serialized candidate can show.
struct RuleChange {
  std::size_t field = 0;
  std::uint8_t from = 0;
  std::uint8_t to = 0;
};

// A point named after the recipe it starts from.
struct Explanation {
  std::string recipe;  // the recipe's name, or "requested" for a requested point that is no recipe
  std::vector<RuleChange> changes;
  Rules rules;
  bool packing_reversed = false;

  // "ocp-mx", "exact with ties=half-away", "exact with quotient=f32-divide, ties=half-away".
  std::string name() const;
  // What each change means, from the rule table ("ties: nearest, ties away from zero; ...").
  std::string description() const;
};

// A point's output against the candidate on the blocks it was run on.
struct Outcome {
  bool refused = false;             // the point is an error on this input (every element counted)
  std::uint64_t elements = 0;       // differing elements (codes or values)
  std::uint64_t scales = 0;         // differing stored scales (and global)
  std::vector<std::uint64_t> blocks;  // the blocks that differ, ascending
  std::vector<std::uint32_t> output;  // the point's own output there: codes and scale patterns, or value bits

  bool matches() const { return !refused && elements == 0 && scales == 0; }
};

// Runs points on the request's tensor and compares with the candidate.
class Judge {
 public:
  virtual ~Judge() = default;
  // On the trial blocks: a few of the blocks that differ from the requested point, each on its
  // own (or the whole tensor, when blocks are not independent).
  virtual Outcome trial(const Rules& r, bool packing_reversed) = 0;
  virtual Outcome whole(const Rules& r, bool packing_reversed) = 0;
  // Elements one trial and one whole run quantize (the budget's unit).
  virtual std::uint64_t trial_cost() const = 0;
  virtual std::uint64_t whole_cost() const = 0;
  virtual std::vector<std::uint64_t> trial_blocks() const = 0;
  // Whether the packing order is visible (serialized candidates of a packed store).
  virtual bool packing_visible() const = 0;
};

struct SearchRequest {
  Scheme scheme;
  Calibration calibration = Calibration::minmax;
  bool given = false;  // the caller's scales
  Rules requested;     // the point the candidate was checked against
  Progress progress;   // the budget spent, of kSearchBudget
};

// Element quantizations the whole search may spend (about a second of the exact engine).
inline constexpr std::uint64_t kSearchBudget = std::uint64_t{1} << 21;

struct SearchResult {
  // The points that reproduce the candidate exactly, all of the first stage that has any:
  // 0 the recipes, 1 a recipe and one change, 2 a recipe and two changes; -1 none.
  int stage = -1;
  std::vector<Explanation> reproducing;
  // When none does: the point nearest the candidate on the trial blocks, and its whole-tensor
  // outcome.
  std::optional<Explanation> closest;
  Outcome closest_outcome;
  // Each trial block the requested point misses, with the first point tried that reproduces it.
  std::map<std::uint64_t, std::string> block_reproduced_by;
  std::uint64_t points = 0;  // points run
  bool capped = false;       // the budget ran out before the search was complete
};

// The search. `requested_name` is the recipe the request names (its point is request.requested).
SearchResult search(const SearchRequest& request, const std::string& requested_name, Judge& judge);

// The name of the recipe whose point r is and which takes scheme s (torch-qint8 and torch-quint8
// share a point), else of the first whose point r is, or "" for none (table order).
std::string recipe_name_of(const Rules& r, const Scheme& s);

}  // namespace qscheme::oracle
