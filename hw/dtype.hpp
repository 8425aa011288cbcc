#pragma once
// Numeric formats that GPUs execute, and their storage size.
#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace exasim {

enum class DType { kFp64, kFp32, kTf32, kFp16, kBf16, kFp8, kFp4, kInt8, kInt4 };

inline constexpr std::array<DType, 9> kAllDTypes = {DType::kFp64, DType::kFp32, DType::kTf32, DType::kFp16, DType::kBf16,
                                                    DType::kFp8,  DType::kFp4,  DType::kInt8, DType::kInt4};

std::string_view dtype_name(DType t);                   // "bf16"
std::optional<DType> dtype_from_name(std::string_view name);
double dtype_bytes(DType t);                            // storage bytes per element (tf32 is stored as fp32: 4)

}  // namespace exasim
