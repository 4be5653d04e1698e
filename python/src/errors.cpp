#include "errors.hpp"

#include <array>

#include "taskring/chip/error_codes.hpp"

namespace taskring::py {

namespace pyb = pybind11;

std::string runtime_code_in(const std::string& message) {
  // Every code error_codes.hpp declares, other than NONE.
  static constexpr std::array<int32_t, 14> kCodes = {1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 100, 200, 201, 202};
  size_t best = std::string::npos;
  std::string found;
  for (int32_t c : kCodes) {
    std::string needle = std::string(pto2_error_name(c)) + ": ";
    size_t at = message.find(needle);
    // The first one in the message is the latched code; later ones are quoted text.
    if (at != std::string::npos && at < best && (at == 0 || message[at - 1] == ' ')) {
      best = at;
      found = std::string(pto2_error_name(c));
    }
  }
  return found;
}

void throw_status(const Status& s) {
  pyb::object make = pyb::module_::import("taskring.errors").attr("_from_status");
  std::string rt = runtime_code_in(s.message());
  pyb::object exc = make(static_cast<int>(s.code()), std::string(status_code_name(s.code())), s.message(),
                         rt.empty() ? pyb::object(pyb::none()) : pyb::object(pyb::str(rt)));
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
  throw pyb::error_already_set();
}

void bind_errors(pyb::module_& m) {
  m.def("_runtime_code_in", [](const std::string& msg) -> pyb::object {
    std::string rt = runtime_code_in(msg);
    return rt.empty() ? pyb::object(pyb::none()) : pyb::object(pyb::str(rt));
  });
  m.def("_status_code_name", [](int code) { return std::string(status_code_name(static_cast<StatusCode>(code))); });
}

}  // namespace taskring::py
