/** \file clstream/cl.h
 * \brief The OpenCL headers at the API level clstream is written against.
 *
 * The one place that fixes the OpenCL API level clstream is written
 * against.  Everything in clstream that needs <CL/cl.h> includes this file
 * instead, so the library builds and runs against a platform that offers
 * only OpenCL 1.2; newer entry points are used only after a run-time
 * version check. */
#ifndef CLSTREAM_CL_H
#define CLSTREAM_CL_H

#ifndef CL_TARGET_OPENCL_VERSION
/** OpenCL 1.2, unless the includer chose a level first (the Khronos
 * headers' own macro). */
#define CL_TARGET_OPENCL_VERSION 120
#endif

#ifdef __APPLE__
#include <OpenCL/opencl.h>
#else
#include <CL/cl.h>
#endif

#endif /* CLSTREAM_CL_H */
