// Functional unit kMatMul (isa.h, MatMulInstruction).
//
// For each batch entry, b's matrix is packed transposed ([J][K], contiguous K) and each row of
// a packed contiguous, so every output element is one contiguous dot product whatever the
// operands' strides are. Dot products are exact: int32 partial sums over chunks short enough
// not to overflow (int8 × int8: 2^16 terms), added in int64; int16 × int16 sums in int64.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "openbpu/simulator/integer_arithmetic.h"
#include "access.h"
#include "scratch.h"
#include "units.h"

namespace openbpu::simulator::functional {

namespace {

using isa::ElementType;

template <typename TA, typename TB, typename TY>
void run(const isa::MatMulInstruction& in, uint8_t* memory) {
  const isa::TensorDesc &a = in.a, &b = in.b, &y = in.output;
  const uint32_t rank = y.rank;
  const int64_t I = y.dims[rank - 2], J = y.dims[rank - 1], K = a.dims[rank - 1];
  const int64_t as_i = a.strides[rank - 2], as_k = a.strides[rank - 1];
  const int64_t bs_k = b.strides[rank - 2], bs_j = b.strides[rank - 1];
  const int64_t ys_i = y.strides[rank - 2], ys_j = y.strides[rank - 1];
  const FixedPointMultiplier f{in.multiplier, in.shift};
  const PreparedMultiplier prepared(f);

  // Batch axes: a or b with extent 1 on an axis is broadcast (read at index 0).
  const uint32_t batch_rank = rank - 2;
  int64_t batches = 1;
  for (uint32_t d = 0; d < batch_rank; ++d) batches *= y.dims[d];
  ScratchVector<TA> arow(static_cast<size_t>(K));
  ScratchVector<TB> bt(static_cast<size_t>(J * K));  // b's matrix transposed: [J][K]
  int64_t packed_b = -1;                           // byte offset of the matrix in bt
  uint32_t index[isa::kMaxRank] = {};
  for (int64_t batch = 0; batch < batches; ++batch) {
    int64_t ao = a.address, bo = b.address, yo = y.address;
    for (uint32_t d = 0; d < batch_rank; ++d) {
      if (a.dims[d] != 1) ao += int64_t{index[d]} * a.strides[d];
      if (b.dims[d] != 1) bo += int64_t{index[d]} * b.strides[d];
      yo += int64_t{index[d]} * y.strides[d];
    }
    if (bo != packed_b) {
      for (int64_t k = 0; k < K; ++k) {
        const uint8_t* src = memory + bo + k * bs_k;
        for (int64_t j = 0; j < J; ++j) bt[size_t(j * K + k)] = load<TB>(src + j * bs_j);
      }
      packed_b = bo;
    }
    for (int64_t i = 0; i < I; ++i) {
      const uint8_t* src = memory + ao + i * as_i;
      if (as_k == static_cast<int64_t>(sizeof(TA))) {
        std::memcpy(arow.data(), src, static_cast<size_t>(K) * sizeof(TA));
      } else {
        for (int64_t k = 0; k < K; ++k) arow[size_t(k)] = load<TA>(src + k * as_k);
      }
      uint8_t* out = memory + yo + i * ys_i;
      for (int64_t j = 0; j < J; ++j) {
        const int64_t acc = dot(arow.data(), bt.data() + j * K, K);
        TY v;
        if constexpr (std::is_same_v<TY, int32_t>) {
          v = saturate<int32_t>(acc);
        } else if (acc >= INT32_MIN && acc <= INT32_MAX) {
          v = saturate<TY>(prepared.apply(static_cast<int32_t>(acc)));
        } else {
          v = saturate<TY>(apply_multiplier(acc, f));
        }
        store<TY>(out + j * ys_j, v);
      }
    }
    for (uint32_t d = batch_rank; d-- > 0;) {
      if (++index[d] < y.dims[d]) break;
      index[d] = 0;
    }
  }
}

template <typename TA, typename TB>
void run_for_output(const isa::MatMulInstruction& in, uint8_t* memory) {
  switch (in.output.type) {
    case ElementType::kInt32: run<TA, TB, int32_t>(in, memory); break;
    case ElementType::kInt16: run<TA, TB, int16_t>(in, memory); break;
    default: run<TA, TB, int8_t>(in, memory); break;
  }
}

template <typename TA>
void run_for_b(const isa::MatMulInstruction& in, uint8_t* memory) {
  if (in.b.type == ElementType::kInt16) {
    run_for_output<TA, int16_t>(in, memory);
  } else {
    run_for_output<TA, int8_t>(in, memory);
  }
}

}  // namespace

void matmul(const isa::MatMulInstruction& in, Memory memory) {
  with_activation_type(in.a.type, [&](auto t) { run_for_b<decltype(t)>(in, memory.data()); });
}

}  // namespace openbpu::simulator::functional
