/* Internal: what the OpenCL stream factory (opencl.c) lets the rest of
 * the library tell it, beside its public vtable
 * (cls_opencl_stream_factory). */
#ifndef CLS_FACTORY_OPENCL_H
#define CLS_FACTORY_OPENCL_H

/* A command is about to wait on an event of no queue that may fail later
 * (a user event: a foreign command's, from ocl_foreign, or fault
 * injection's gate).  PoCL 3.1 aborts the process failing a command
 * behind it that is followed on its queue by one with no event the
 * program still holds; so from now on, in this process, every command the
 * factory enqueues keeps its event.  Thread-safe. */
void cls__opencl_outside_event(void);

#endif /* CLS_FACTORY_OPENCL_H */
