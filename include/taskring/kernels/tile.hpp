// The tile math library for kernels: include this one header.
//
//   tile_cast.hpp    dtype conversion rules (RNE to FP16/BF16, saturating ints)
//   tile_view.hpp    Tile, View2D, view_2d(), load/store, cast, FP32 maps
//   tile_ops.hpp     elementwise binary/unary, row reductions, broadcasts
//   tile_matmul.hpp  matmul with FP32 accumulation (OpenBLAS, 1 thread)
#pragma once

#include "taskring/kernels/tile_cast.hpp"
#include "taskring/kernels/tile_matmul.hpp"
#include "taskring/kernels/tile_ops.hpp"
#include "taskring/kernels/tile_view.hpp"
