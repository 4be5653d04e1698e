/* c_api.h must be valid C: this translation unit is compiled as C11. */
#include "taskring/c_api.h"

int taskring_c_api_header_is_c(void) {
  taskring_error err;
  taskring_worker* w = 0;
  (void)err;
  (void)w;
  return (int)sizeof(taskring_tensor);
}
