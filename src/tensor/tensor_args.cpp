#include "taskring/tensor/task_args.hpp"
#include "taskring/tensor/tensor_create_info.hpp"

namespace taskring {

std::string_view tensor_arg_type_name(TensorArgType t) {
  switch (t) {
    case TensorArgType::INPUT: return "INPUT";
    case TensorArgType::OUTPUT: return "OUTPUT";
    case TensorArgType::INOUT: return "INOUT";
    case TensorArgType::OUTPUT_EXISTING: return "OUTPUT_EXISTING";
    case TensorArgType::NO_DEP: return "NO_DEP";
  }
  return "INVALID";
}

Status TensorCreateInfo::validate() const {
  if (ndims < 1 || ndims > MAX_TENSOR_DIMS) {
    return invalid_argument("TensorCreateInfo: ndims " + std::to_string(ndims) + " outside 1..5");
  }
  if (!is_valid_data_type(dtype)) {
    return invalid_argument("TensorCreateInfo: dtype value " + std::to_string(static_cast<int>(dtype)) +
                            " is not a DataType");
  }
  return Status::Ok();
}

}  // namespace taskring
