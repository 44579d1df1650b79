/* The error table: codes, names and messages all come from CLS_ERRNO_MAP,
 * plus the thread's last error (OpenCL status and detail text). */
#include "util/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* enum cls_errno spells every value out (each with its documentation);
 * CLS_ERRNO_MAP gives names and messages.  They must agree. */
#define CLS__ERR_CHECK(name, val, msg) \
  _Static_assert(CLS_##name == (val), "enum cls_errno and CLS_ERRNO_MAP differ: CLS_" #name);
CLS_ERRNO_MAP(CLS__ERR_CHECK)
#undef CLS__ERR_CHECK

CLS_API const char *cls_strerror(int err) {
  switch (err) {
  case CLS_OK:
    return "success";
#define CLS__ERR_MSG(name, val, msg) \
  case CLS_##name:                   \
    return msg;
    CLS_ERRNO_MAP(CLS__ERR_MSG)
#undef CLS__ERR_MSG
  }
  return "unknown error";
}

CLS_API const char *cls_err_name(int err) {
  switch (err) {
  case CLS_OK:
    return "CLS_OK";
#define CLS__ERR_NAME(name, val, msg) \
  case CLS_##name:                    \
    return "CLS_" #name;
    CLS_ERRNO_MAP(CLS__ERR_NAME)
#undef CLS__ERR_NAME
  }
  return "UNKNOWN";
}

CLS_API const char *cls_cl_status_name(int s) {
  switch (s) {
#define N(x) \
  case x:    \
    return #x;
    N(CL_SUCCESS)
    N(CLS_FOREIGN_BAD_STATUS)
    N(CLS_FOREIGN_BAD_EVENT)
    N(CL_DEVICE_NOT_FOUND)
    N(CL_DEVICE_NOT_AVAILABLE)
    N(CL_COMPILER_NOT_AVAILABLE)
    N(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    N(CL_OUT_OF_RESOURCES)
    N(CL_OUT_OF_HOST_MEMORY)
    N(CL_PROFILING_INFO_NOT_AVAILABLE)
    N(CL_MEM_COPY_OVERLAP)
    N(CL_IMAGE_FORMAT_MISMATCH)
    N(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    N(CL_BUILD_PROGRAM_FAILURE)
    N(CL_MAP_FAILURE)
    N(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    N(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    N(CL_COMPILE_PROGRAM_FAILURE)
    N(CL_LINKER_NOT_AVAILABLE)
    N(CL_LINK_PROGRAM_FAILURE)
    N(CL_DEVICE_PARTITION_FAILED)
    N(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    N(CL_INVALID_VALUE)
    N(CL_INVALID_DEVICE_TYPE)
    N(CL_INVALID_PLATFORM)
    N(CL_INVALID_DEVICE)
    N(CL_INVALID_CONTEXT)
    N(CL_INVALID_QUEUE_PROPERTIES)
    N(CL_INVALID_COMMAND_QUEUE)
    N(CL_INVALID_HOST_PTR)
    N(CL_INVALID_MEM_OBJECT)
    N(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    N(CL_INVALID_IMAGE_SIZE)
    N(CL_INVALID_SAMPLER)
    N(CL_INVALID_BINARY)
    N(CL_INVALID_BUILD_OPTIONS)
    N(CL_INVALID_PROGRAM)
    N(CL_INVALID_PROGRAM_EXECUTABLE)
    N(CL_INVALID_KERNEL_NAME)
    N(CL_INVALID_KERNEL_DEFINITION)
    N(CL_INVALID_KERNEL)
    N(CL_INVALID_ARG_INDEX)
    N(CL_INVALID_ARG_VALUE)
    N(CL_INVALID_ARG_SIZE)
    N(CL_INVALID_KERNEL_ARGS)
    N(CL_INVALID_WORK_DIMENSION)
    N(CL_INVALID_WORK_GROUP_SIZE)
    N(CL_INVALID_WORK_ITEM_SIZE)
    N(CL_INVALID_GLOBAL_OFFSET)
    N(CL_INVALID_EVENT_WAIT_LIST)
    N(CL_INVALID_EVENT)
    N(CL_INVALID_OPERATION)
    N(CL_INVALID_GL_OBJECT)
    N(CL_INVALID_BUFFER_SIZE)
    N(CL_INVALID_MIP_LEVEL)
    N(CL_INVALID_GLOBAL_WORK_SIZE)
    N(CL_INVALID_PROPERTY)
    N(CL_INVALID_IMAGE_DESCRIPTOR)
    N(CL_INVALID_COMPILER_OPTIONS)
    N(CL_INVALID_LINKER_OPTIONS)
    N(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef N
  }
  return s < 0 ? "CL_UNKNOWN_ERROR" : "CL_UNKNOWN_STATUS";
}

CLS_API const char *cls_version_string(void) { return PACKAGE_VERSION; }

/* The last error of each thread: the OpenCL status behind it and a detail
 * text.  Thread-local so concurrent contexts never mix their details.  The
 * text counts only while cls__last.has_detail is set, so clearing (every
 * entry point does) is two stores inline (util.h), never a write here. */
_Thread_local struct cls__last_error cls__last;
static _Thread_local char detail[8192];
/* Writes a deferred detail now. */
static void flush(void) {
  void (*render)(void) = cls__last.deferred;
  if (!render)
    return;
  cls__last.deferred = NULL;
  detail[0] = '\0';
  render();
}

int cls__error(int err, cl_int cl_status, const char *fmt, ...) {
  cls__last.cl_status = cl_status;
  cls__last.has_detail = true;
  cls__last.deferred = NULL;
  detail[0] = '\0';
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
  }
  return err;
}

void cls__error_append(const char *fmt, ...) {
  if (!cls__last.has_detail) {
    cls__last.has_detail = true;
    cls__last.deferred = NULL;
    detail[0] = '\0';
  } else {
    flush();
  }
  size_t len = strlen(detail);
  if (len + 1 >= sizeof detail)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail + len, sizeof detail - len, fmt, ap);
  va_end(ap);
}

CLS_API int cls_last_cl_status(void) { return cls__last.cl_status; }
CLS_API const char *cls_last_error_detail(void) {
  if (!cls__last.has_detail)
    return "";
  flush();
  return detail;
}
