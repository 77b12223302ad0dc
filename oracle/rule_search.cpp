// The rule-space search (rule_search.hpp): recipes, then one change, then two, each point first on
// the trial blocks and on the whole tensor only when it reproduces those.
#include "oracle/rule_search.hpp"

#include <algorithm>
#include <set>

#include "scheme/recipes.hpp"

namespace qscheme::oracle {
namespace {

// Whole-tensor runs that confirm a point passing the trial: each costs a pass of the exact
// engine over the tensor, so only a few, apart from the trial budget.
constexpr int kMaxConfirmations = 16;

std::size_t packing_field() { return rule_fields().size(); }

bool has_ue8m0(const Scheme& s) {
  return s.scale_dtype() == ScaleDtype::ue8m0 || s.tensor == ScaleDtype::ue8m0;
}

struct Point {
  Explanation e;
  Outcome trial;
};

std::string key_of(const Rules& r, bool reversed) { return format_rules(r) + (reversed ? ";reversed" : ""); }

Explanation changed(const Explanation& base, const RuleChange& c) {
  Explanation e = base;
  e.changes.push_back(c);
  if (c.field == packing_field()) {
    e.packing_reversed = true;
  } else {
    set_field_value(e.rules, c.field, c.to);
  }
  return e;
}

class Search {
 public:
  Search(const SearchRequest& rq, Judge& judge) : rq_(rq), judge_(judge) {}

  SearchResult run(const std::string& requested_name) {
    seen_.insert(key_of(rq_.requested, false));
    Point requested{{requested_name, {}, rq_.requested, false}, {}};
    auto t = trial(requested.e);
    if (!t) return finish();
    requested.trial = *t;
    nearest_ = requested.e;
    nearest_score_ = score(*t);
    std::vector<Point> starts{requested};
    std::set<std::string> start_keys{key_of(rq_.requested, false)};
    // Stage 0: the recipes.
    for (const Recipe& r : recipes()) {
      if (r.rules == rq_.requested || !recipe_accepts(r, rq_.scheme) || !describes(r.rules)) continue;
      Point p{{std::string(r.name), {}, r.rules, false}, {}};
      recipe_points_.insert(key_of(r.rules, false));
      auto o = trial(p.e);
      if (!o) return finish();
      p.trial = *o;
      if (o->matches() && confirm(p.e)) out_.reproducing.push_back(p.e);
      if (start_keys.insert(key_of(r.rules, false)).second) starts.push_back(p);
    }
    if (!out_.reproducing.empty()) return finish(0);
    // The nearest recipes first: the requested one, then by how far each is on the trial blocks.
    std::stable_sort(starts.begin() + 1, starts.end(),
                     [](const Point& a, const Point& b) { return score(a.trial) < score(b.trial); });
    // Stage 1: one change from each start.
    for (const Point& start : starts) {
      for (const RuleChange& c : changes_of(start.e.rules)) {
        const Explanation e = changed(start.e, c);
        if (!describes(e.rules) || !fresh(e)) continue;
        auto o = trial(e);
        if (!o) return finish();
        if (o->matches() && confirm(e)) out_.reproducing.push_back(e);
      }
      if (!out_.reproducing.empty()) return finish(1);
    }
    // Stage 2: two changes of different fields. Neither needs to alter the output alone (ggml's
    // zero scale needs both quotient=f32-reciprocal-or-zero and zero-scale=ieee).
    for (const Point& start : starts) {
      const std::vector<RuleChange> u = changes_of(start.e.rules);
      for (std::size_t i = 0; i < u.size(); ++i) {
        for (std::size_t k = i + 1; k < u.size(); ++k) {
          if (u[i].field == u[k].field) continue;
          const Explanation e = changed(changed(start.e, u[i]), u[k]);
          if (!describes(e.rules) || !fresh(e)) continue;
          auto o = trial(e);
          if (!o) return finish();
          if (o->matches() && confirm(e)) out_.reproducing.push_back(e);
        }
      }
      if (!out_.reproducing.empty()) return finish(2);
    }
    return finish();
  }

 private:
  static std::uint64_t score(const Outcome& o) { return o.elements + o.scales; }

  // Burn has no ue8m0 scales: its point does not describe such a scheme.
  bool describes(const Rules& r) const {
    if (profile_of(r) == Profile::burn && has_ue8m0(rq_.scheme)) return false;
    return validate_rules(r, rq_.scheme, rq_.calibration, rq_.given).ok();
  }

  // Not a point stage 0 ran (a recipe of the scheme) and not run before.
  bool fresh(const Explanation& e) {
    const std::string k = key_of(e.rules, e.packing_reversed);
    if (!e.packing_reversed && recipe_points_.count(k)) return false;
    return seen_.insert(k).second;
  }

  // Every other choice of every field that can matter for the request.
  std::vector<RuleChange> changes_of(const Rules& r) const {
    std::vector<RuleChange> out;
    const auto fields = rule_fields();
    for (std::size_t f = 0; f < fields.size(); ++f) {
      if (!relevant(f)) continue;
      const std::uint8_t from = field_value(r, f);
      for (std::size_t v = 0; v < fields[f].choices.size(); ++v) {
        if (v != from) out.push_back({f, from, static_cast<std::uint8_t>(v)});
      }
    }
    if (judge_.packing_visible()) out.push_back({packing_field(), 0, 1});
    return out;
  }

  // Fields no output of the request depends on, whatever their choice (docs/SEMANTICS.md 11.1):
  // the rounding of the other family of kinds, the two-level rules of a one-level scheme, and
  // how a scale is calibrated when it is given.
  bool relevant(std::size_t field) const {
    const std::string_view name = rule_fields()[field].name;
    const bool is_float = info(rq_.scheme.value).is_float;
    if (name == "ties") return !is_float;
    if (name == "float-ties" || name == "zero-sign") return is_float;
    if (name == "two-level" || name == "product") return rq_.scheme.two_level();
    if (name == "arithmetic" || name == "statistic") return !rq_.given;
    return true;
  }

  std::optional<Outcome> trial(const Explanation& e) {
    if (spent_ + judge_.trial_cost() > kSearchBudget) {
      out_.capped = true;
      return std::nullopt;
    }
    spent_ += judge_.trial_cost();
    ++out_.points;
    if (rq_.progress) rq_.progress(spent_, kSearchBudget);
    Outcome o = judge_.trial(e.rules, e.packing_reversed);
    if (!o.refused) {
      for (std::uint64_t b : judge_.trial_blocks()) {
        if (!std::binary_search(o.blocks.begin(), o.blocks.end(), b) && !out_.block_reproduced_by.count(b) &&
            !(e.changes.empty() && e.rules == rq_.requested)) {
          out_.block_reproduced_by[b] = e.name();
        }
      }
    }
    if (score(o) < nearest_score_) {
      nearest_score_ = score(o);
      nearest_ = e;
    }
    return o;
  }

  bool confirm(const Explanation& e) {
    if (confirmations_ >= kMaxConfirmations) {
      out_.capped = true;
      return false;
    }
    ++confirmations_;
    return judge_.whole(e.rules, e.packing_reversed).matches();
  }

  SearchResult finish(int stage = -1) {
    out_.stage = stage;
    if (stage < 0 && nearest_) {
      out_.closest = nearest_;
      const bool requested = nearest_->changes.empty() && nearest_->rules == rq_.requested;
      if (!requested) out_.closest_outcome = judge_.whole(nearest_->rules, nearest_->packing_reversed);
    }
    return std::move(out_);
  }

  const SearchRequest& rq_;
  Judge& judge_;
  SearchResult out_;
  std::set<std::string> recipe_points_;
  std::set<std::string> seen_;
  std::uint64_t spent_ = 0;
  int confirmations_ = 0;
  std::optional<Explanation> nearest_;
  std::uint64_t nearest_score_ = 0;
};

}  // namespace

std::string Explanation::name() const {
  std::string out = recipe;
  const auto fields = rule_fields();
  for (std::size_t i = 0; i < changes.size(); ++i) {
    out += i ? ", " : " with ";
    const RuleChange& c = changes[i];
    out += c.field == packing_field() ? std::string("packing=reversed")
                                      : std::string(fields[c.field].name) + "=" +
                                            std::string(fields[c.field].choices[c.to].name);
  }
  return out;
}

std::string Explanation::description() const {
  if (changes.empty()) {
    auto r = find_recipe(recipe);
    return r ? std::string((*r)->notes) : std::string("the requested rules");
  }
  std::string out;
  const auto fields = rule_fields();
  for (const RuleChange& c : changes) {
    if (!out.empty()) out += "; ";
    if (c.field == packing_field()) {
      out += "packing: sub-byte codes fill each storage element from the high bits down";
    } else {
      out += std::string(fields[c.field].name) + ": " + std::string(fields[c.field].choices[c.to].meaning) +
             " (not " + std::string(fields[c.field].choices[c.from].name) + ")";
    }
  }
  return out;
}

SearchResult search(const SearchRequest& request, const std::string& requested_name, Judge& judge) {
  return Search(request, judge).run(requested_name);
}

std::string recipe_name_of(const Rules& r, const Scheme& s) {
  std::string first;
  for (const Recipe& rec : recipes()) {
    if (!(rec.rules == r)) continue;
    if (recipe_accepts(rec, s)) return std::string(rec.name);
    if (first.empty()) first = rec.name;
  }
  return first;
}

}  // namespace qscheme::oracle
