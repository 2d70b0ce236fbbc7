// Linear algebra: Einsum (opset 12) and Det (opset 11).
//
// Einsum parses the equation once at prepare time into labelled terms. At run time every
// operand is first reduced on its own (diagonals of repeated labels taken, size-1 broadcast
// dimensions dropped, labels used nowhere else summed), then the operands are contracted pairwise
// from left to right as batched matrix products, keeping only labels still needed; the result is
// finally permuted into the output order. Pairwise contraction keeps the cost polynomial per step
// instead of looping over the product of all label sizes at once.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "families.h"
#include "openbpu/kernels/axes.h"
#include "openbpu/kernels/dispatch.h"

namespace openbpu::kernels {

namespace {

// Labels: letters are 0..51 ('A'..'Z' then 'a'..'z', the ASCII order numpy uses for implicit
// outputs); the broadcast ellipsis dimensions are kEllipsisLabel + i (i = 0 outermost).
constexpr int kLetterLabels = 52;
constexpr int kEllipsisLabel = 64;

int letter_label(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  return 26 + (c - 'a');
}

// One side of the equation: letter labels and where the ellipsis sits (-1: none).
struct EinsumTerm {
  std::vector<int> letters;  // in order, excluding the ellipsis
  int ellipsis_at = -1;      // index into letters before which "..." stands
};

EinsumTerm parse_term(const std::string& text, const std::string& equation) {
  EinsumTerm term;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.') {
      OPENBPU_CHECK(text.compare(i, 3, "...") == 0 && term.ellipsis_at < 0, "Einsum: equation '", equation,
            "' has a malformed or repeated ellipsis in term '", text, "'");
      term.ellipsis_at = static_cast<int>(term.letters.size());
      i += 2;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      term.letters.push_back(letter_label(c));
    } else {
      fail("Einsum: equation '", equation, "' contains invalid character '", c, "'");
    }
  }
  return term;
}

// Working operand: labelled dimensions over a dense row-major buffer.
template <typename Acc>
struct Labelled {
  std::vector<int> labels;
  Shape dims;
  std::vector<Acc> data;
};

// Generic strided copy: out[index over out_dims] = in[sum index[k] * in_strides[k]].
template <typename Acc>
std::vector<Acc> gather_strided(const std::vector<Acc>& in, const Shape& out_dims,
                                const std::vector<int64_t>& in_strides) {
  const int64_t count = shape_element_count(out_dims);
  std::vector<Acc> out(static_cast<size_t>(count));
  const size_t rank = out_dims.size();
  std::vector<int64_t> index(rank, 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < count; ++i) {
    out[static_cast<size_t>(i)] = in[static_cast<size_t>(offset)];
    for (size_t a = rank; a-- > 0;) {
      if (++index[a] < out_dims[a]) {
        offset += in_strides[a];
        break;
      }
      offset -= in_strides[a] * (out_dims[a] - 1);
      index[a] = 0;
    }
  }
  return out;
}

// Permutes x so that its labels follow `order` (a permutation of x.labels).
template <typename Acc>
Labelled<Acc> permuted(Labelled<Acc> x, const std::vector<int>& order) {
  if (order == x.labels) return x;
  const std::vector<int64_t> strides = contiguous_strides(x.dims);
  Labelled<Acc> out;
  out.labels = order;
  std::vector<int64_t> gather(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    const size_t a = static_cast<size_t>(std::find(x.labels.begin(), x.labels.end(), order[i]) -
                                         x.labels.begin());
    out.dims.push_back(x.dims[a]);
    gather[i] = strides[a];
  }
  out.data = gather_strided(x.data, out.dims, gather);
  return out;
}

// Sums out every label of x not in `keep` (order of the kept labels preserved).
template <typename Acc>
Labelled<Acc> summed(Labelled<Acc> x, const std::vector<int>& keep) {
  std::vector<int> kept, dropped;
  for (int l : x.labels) {
    (std::find(keep.begin(), keep.end(), l) != keep.end() ? kept : dropped).push_back(l);
  }
  if (dropped.empty()) return x;
  std::vector<int> order = kept;
  order.insert(order.end(), dropped.begin(), dropped.end());
  const Labelled<Acc> p = permuted(std::move(x), order);
  Labelled<Acc> out;
  out.labels = kept;
  out.dims.assign(p.dims.begin(), p.dims.begin() + static_cast<std::ptrdiff_t>(kept.size()));
  const int64_t rows = shape_element_count(out.dims);
  const int64_t inner =
      rows == 0 ? 0 : static_cast<int64_t>(p.data.size()) / std::max<int64_t>(rows, 1);
  out.data.assign(static_cast<size_t>(rows), Acc(0));
  for (int64_t r = 0; r < rows; ++r) {
    Acc sum(0);
    for (int64_t k = 0; k < inner; ++k) sum += p.data[static_cast<size_t>(r * inner + k)];
    out.data[static_cast<size_t>(r)] = sum;
  }
  return out;
}

// Contracts a and b over their shared labels not in `keep`; the result's labels are
// [batch (shared and kept), a-only, b-only].
template <typename Acc>
Labelled<Acc> contract(ThreadPool* pool, Labelled<Acc> a, Labelled<Acc> b,
                       const std::vector<int>& keep) {
  auto has = [](const std::vector<int>& v, int l) {
    return std::find(v.begin(), v.end(), l) != v.end();
  };
  // Labels of one side that neither the other side nor `keep` uses are summed first.
  std::vector<int> keep_a = keep, keep_b = keep;
  keep_a.insert(keep_a.end(), b.labels.begin(), b.labels.end());
  keep_b.insert(keep_b.end(), a.labels.begin(), a.labels.end());
  a = summed(std::move(a), keep_a);
  b = summed(std::move(b), keep_b);
  std::vector<int> batch, left, right, inner;
  for (int l : a.labels) {
    if (has(b.labels, l)) {
      (has(keep, l) ? batch : inner).push_back(l);
    } else {
      left.push_back(l);
    }
  }
  for (int l : b.labels) {
    if (!has(a.labels, l)) right.push_back(l);
  }
  auto concat = [](std::initializer_list<const std::vector<int>*> parts) {
    std::vector<int> v;
    for (const auto* p : parts) v.insert(v.end(), p->begin(), p->end());
    return v;
  };
  const Labelled<Acc> pa = permuted(std::move(a), concat({&batch, &left, &inner}));
  const Labelled<Acc> pb = permuted(std::move(b), concat({&batch, &inner, &right}));
  auto size_of = [](const Labelled<Acc>& x, size_t begin, size_t count) {
    return dims_product(x.dims, begin, begin + count);
  };
  const int64_t nb = size_of(pa, 0, batch.size());
  const int64_t m = size_of(pa, batch.size(), left.size());
  const int64_t k = size_of(pa, batch.size() + left.size(), inner.size());
  const int64_t n = size_of(pb, batch.size() + inner.size(), right.size());
  Labelled<Acc> out;
  out.labels = concat({&batch, &left, &right});
  out.dims.assign(pa.dims.begin(),
                  pa.dims.begin() + static_cast<std::ptrdiff_t>(batch.size() + left.size()));
  out.dims.insert(out.dims.end(), pb.dims.end() - static_cast<std::ptrdiff_t>(right.size()),
                  pb.dims.end());
  out.data.assign(static_cast<size_t>(shape_element_count(out.dims)), Acc(0));
  const Acc* da = pa.data.data();
  const Acc* db = pb.data.data();
  Acc* dc = out.data.data();
  parallel_for(pool, nb * m, std::max<int64_t>(1, 16384 / std::max<int64_t>(k * n, 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t row = begin; row < end; ++row) {
                   const int64_t bi = row / std::max<int64_t>(m, 1);
                   const Acc* ar = da + row * k;
                   const Acc* bm = db + bi * k * n;
                   Acc* cr = dc + row * n;
                   for (int64_t kk = 0; kk < k; ++kk) {
                     const Acc av = ar[kk];
                     const Acc* br = bm + kk * n;
                     for (int64_t j = 0; j < n; ++j) cr[j] += av * br[j];
                   }
                 }
               });
  return out;
}

class EinsumKernel final : public Kernel {
 public:
  explicit EinsumKernel(const NodeInfo& node) {
    equation_ = node.attrs.get_string("equation");
    std::string eq;
    for (char c : equation_) {
      if (c != ' ' && c != '\t') eq.push_back(c);
    }
    const size_t arrow = eq.find("->");
    const std::string lhs = eq.substr(0, arrow);
    size_t start = 0;
    while (true) {
      const size_t comma = lhs.find(',', start);
      terms_.push_back(parse_term(lhs.substr(start, comma - start), equation_));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (arrow != std::string::npos) {
      output_ = parse_term(eq.substr(arrow + 2), equation_);
      for (size_t i = 0; i < output_.letters.size(); ++i) {
        for (size_t j = 0; j < i; ++j) {
          OPENBPU_CHECK(output_.letters[i] != output_.letters[j], "Einsum: equation '", equation_,
                "' repeats a label in the output");
        }
        bool found = false;
        for (const auto& t : terms_) {
          found = found || std::find(t.letters.begin(), t.letters.end(), output_.letters[i]) !=
                               t.letters.end();
        }
        OPENBPU_CHECK(found, "Einsum: equation '", equation_,
              "' has an output label missing from the inputs");
      }
    } else {
      // Implicit output: the ellipsis, then labels used exactly once, in alphabetical order.
      int uses[kLetterLabels] = {};
      bool any_ellipsis = false;
      for (const auto& t : terms_) {
        for (int l : t.letters) ++uses[l];
        any_ellipsis = any_ellipsis || t.ellipsis_at >= 0;
      }
      if (any_ellipsis) output_.ellipsis_at = 0;
      for (int l = 0; l < kLetterLabels; ++l) {
        if (uses[l] == 1) output_.letters.push_back(l);
      }
    }
  }

  void run(KernelContext& ctx) const override {
    OPENBPU_CHECK(ctx.input_count() == static_cast<int>(terms_.size()), "Einsum: equation '", equation_,
          "' has ", terms_.size(), " input terms but the node has ", ctx.input_count(), " inputs");
    const Tensor& first = ctx.input(0);
    for (int i = 1; i < ctx.input_count(); ++i) {
      OPENBPU_CHECK(ctx.input(i).dtype() == first.dtype(), "Einsum: all inputs must have one type; input ",
            i, " is ", ctx.input(i).describe(), ", input 0 is ", first.describe());
    }
    dispatch<NumericTypes>(first.dtype(), "Einsum", [&]<typename T>() { compute<T>(ctx); });
  }

 private:
  template <typename T>
  using Accumulator =
      std::conditional_t<std::is_floating_point_v<ComputeType<T>>, double,
                         std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

  template <typename T>
  void compute(KernelContext& ctx) const {
    using Acc = Accumulator<T>;
    const size_t count = terms_.size();
    // Labels of every operand dimension, and the broadcast ellipsis rank.
    std::vector<std::vector<int>> labels(count);
    int64_t ellipsis_rank = 0;
    for (size_t i = 0; i < count; ++i) {
      const Tensor& x = ctx.input(static_cast<int>(i));
      const EinsumTerm& t = terms_[i];
      const int64_t letters = static_cast<int64_t>(t.letters.size());
      if (t.ellipsis_at < 0) {
        OPENBPU_CHECK(x.rank() == letters, "Einsum: term ", i, " of '", equation_, "' has ", letters,
              " labels but input ", i, " has rank ", x.rank());
      } else {
        OPENBPU_CHECK(x.rank() >= letters, "Einsum: term ", i, " of '", equation_, "' has ", letters,
              " labels but input ", i, " has rank ", x.rank());
        ellipsis_rank = std::max(ellipsis_rank, x.rank() - letters);
      }
    }
    OPENBPU_CHECK(ellipsis_rank <= kEllipsisLabel, "Einsum: ellipsis covers too many dimensions");
    for (size_t i = 0; i < count; ++i) {
      const Tensor& x = ctx.input(static_cast<int>(i));
      const EinsumTerm& t = terms_[i];
      const int64_t span = x.rank() - static_cast<int64_t>(t.letters.size());
      for (size_t k = 0; k <= t.letters.size(); ++k) {
        if (static_cast<int>(k) == t.ellipsis_at) {
          for (int64_t e = 0; e < span; ++e) {
            labels[i].push_back(kEllipsisLabel + static_cast<int>(ellipsis_rank - span + e));
          }
        }
        if (k < t.letters.size()) labels[i].push_back(t.letters[k]);
      }
    }
    // Size of every label: all uses agree, except that size 1 broadcasts.
    std::vector<int64_t> size(kEllipsisLabel * 2, -1);
    for (size_t i = 0; i < count; ++i) {
      const Tensor& x = ctx.input(static_cast<int>(i));
      for (size_t a = 0; a < labels[i].size(); ++a) {
        for (size_t b = 0; b < a; ++b) {  // a repeated label (diagonal) needs equal sizes
          OPENBPU_CHECK(labels[i][b] != labels[i][a] ||
                    x.dim(static_cast<int64_t>(a)) == x.dim(static_cast<int64_t>(b)),
                "Einsum: input ", i, " of '", equation_, "' repeats a label over dimensions of ",
                "sizes ", x.dim(static_cast<int64_t>(b)), " and ", x.dim(static_cast<int64_t>(a)));
        }
        int64_t& s = size[static_cast<size_t>(labels[i][a])];
        const int64_t d = x.dim(static_cast<int64_t>(a));
        OPENBPU_CHECK(s < 0 || s == d || s == 1 || d == 1, "Einsum: a label of '", equation_, "' has size ",
              d, " in input ", i, " but size ", s, " elsewhere");
        if (s < 0 || s == 1) s = d;
      }
    }
    // Output labels.
    std::vector<int> out_labels;
    for (size_t k = 0; k <= output_.letters.size(); ++k) {
      if (static_cast<int>(k) == output_.ellipsis_at) {
        for (int64_t e = 0; e < ellipsis_rank; ++e) {
          out_labels.push_back(kEllipsisLabel + static_cast<int>(e));
        }
      }
      if (k < output_.letters.size()) out_labels.push_back(output_.letters[k]);
    }

    // Per-operand reduction: diagonals, broadcast dims, labels used nowhere else.
    std::vector<Labelled<Acc>> operands(count);
    for (size_t i = 0; i < count; ++i) {
      std::vector<int> needed = out_labels;
      for (size_t j = 0; j < count; ++j) {
        if (j != i) needed.insert(needed.end(), labels[j].begin(), labels[j].end());
      }
      operands[i] = reduce_operand<T, Acc>(ctx.input(static_cast<int>(i)), labels[i], size, needed);
    }
    Labelled<Acc> acc = std::move(operands[0]);
    for (size_t i = 1; i < count; ++i) {
      std::vector<int> keep = out_labels;
      for (size_t j = i + 1; j < count; ++j) {
        keep.insert(keep.end(), operands[j].labels.begin(), operands[j].labels.end());
      }
      acc = contract(ctx.thread_pool(), std::move(acc), std::move(operands[i]), keep);
    }
    acc = summed(std::move(acc), out_labels);
    // Output labels absent from acc were broadcast (size 1) everywhere; they come back as
    // size-1 dimensions.
    std::vector<int> present;
    Shape out_shape;
    for (int l : out_labels) {
      const bool have = std::find(acc.labels.begin(), acc.labels.end(), l) != acc.labels.end();
      if (have) present.push_back(l);
      out_shape.push_back(have ? size[static_cast<size_t>(l)] : 1);
    }
    acc = permuted(std::move(acc), present);
    Tensor& y = ctx.allocate_output(0, ctx.input(0).dtype(), out_shape);
    T* out = y.data<T>();
    for (size_t e = 0; e < acc.data.size(); ++e) {
      out[e] = from_compute<T>(static_cast<ComputeType<T>>(acc.data[e]));
    }
  }

  template <typename T, typename Acc>
  static Labelled<Acc> reduce_operand(const Tensor& x, const std::vector<int>& labels,
                                      const std::vector<int64_t>& size,
                                      const std::vector<int>& needed) {
    // Unique labels, dropping size-1 dimensions of labels that are larger elsewhere.
    const std::vector<int64_t> strides = contiguous_strides(x.shape());
    Labelled<Acc> out;
    std::vector<int64_t> gather;
    for (size_t a = 0; a < labels.size(); ++a) {
      const int l = labels[a];
      const int64_t d = x.dim(static_cast<int64_t>(a));
      if (d == 1 && size[static_cast<size_t>(l)] != 1) continue;  // broadcast
      const auto it = std::find(out.labels.begin(), out.labels.end(), l);
      if (it != out.labels.end()) {  // repeated label: diagonal
        const size_t at = static_cast<size_t>(it - out.labels.begin());
        OPENBPU_CHECK(out.dims[at] == d, "Einsum: repeated label has sizes ", out.dims[at], " and ", d);
        gather[at] += strides[a];
        continue;
      }
      out.labels.push_back(l);
      out.dims.push_back(d);
      gather.push_back(strides[a]);
    }
    std::vector<Acc> values(static_cast<size_t>(x.element_count()));
    const T* in = x.data<T>();
    for (size_t e = 0; e < values.size(); ++e) values[e] = static_cast<Acc>(to_compute(in[e]));
    out.data = gather_strided(values, out.dims, gather);
    return summed(std::move(out), needed);
  }

  std::string equation_;
  std::vector<EinsumTerm> terms_;
  EinsumTerm output_;
};

// ---------------------------------------------------------------------------------------------
// Det: determinants of [..., M, M] by LU decomposition with partial pivoting (in double).

class DetKernel final : public Kernel {
 public:
  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.rank();
    OPENBPU_CHECK(rank >= 2 && x.dim(rank - 1) == x.dim(rank - 2),
          "Det: input must be [..., M, M] (square matrices), got ", x.describe());
    const int64_t m = x.dim(rank - 1);
    Shape out_shape(x.shape().begin(), x.shape().end() - 2);
    Tensor& y = ctx.allocate_output(0, x.dtype(), out_shape);
    const int64_t batch = y.element_count();
    dispatch<FloatTypes>(x.dtype(), "Det", [&]<typename T>() {
      const T* in = x.data<T>();
      T* out = y.data<T>();
      parallel_for(
          ctx.thread_pool(), batch, std::max<int64_t>(1, 4096 / std::max<int64_t>(m * m * m, 1)),
          [&](int64_t begin, int64_t end) {
            std::vector<double> a(static_cast<size_t>(m * m));
            for (int64_t b = begin; b < end; ++b) {
              for (int64_t i = 0; i < m * m; ++i) {
                a[static_cast<size_t>(i)] = static_cast<double>(to_compute(in[b * m * m + i]));
              }
              out[b] = from_compute<T>(static_cast<ComputeType<T>>(determinant(a, m)));
            }
          });
    });
  }

 private:
  static double determinant(std::vector<double>& a, int64_t m) {
    double det = 1.0;
    auto at = [&](int64_t r, int64_t c) -> double& { return a[static_cast<size_t>(r * m + c)]; };
    for (int64_t col = 0; col < m; ++col) {
      int64_t pivot = col;
      for (int64_t r = col + 1; r < m; ++r) {
        if (std::fabs(at(r, col)) > std::fabs(at(pivot, col))) pivot = r;
      }
      if (std::isnan(at(pivot, col))) return at(pivot, col);
      if (at(pivot, col) == 0.0) return 0.0;  // singular
      if (pivot != col) {
        for (int64_t c = 0; c < m; ++c) std::swap(at(col, c), at(pivot, c));
        det = -det;
      }
      const double p = at(col, col);
      det *= p;
      for (int64_t r = col + 1; r < m; ++r) {
        const double f = at(r, col) / p;
        if (f == 0.0) continue;
        for (int64_t c = col + 1; c < m; ++c) at(r, c) -= f * at(col, c);
      }
    }
    return det;
  }
};

}  // namespace

void register_linalg_kernels(std::vector<KernelDef>& defs) {
  defs.push_back(
      {"", "Einsum", 12, {{"equation", AttrKind::kString, true}}, &make_kernel<EinsumKernel>});
  defs.push_back({"", "Det", 11, {}, &make_kernel<DetKernel>});
}

}  // namespace openbpu::kernels
