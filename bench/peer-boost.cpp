// clstream-bench's Boost.Compute peer: the *-args workloads as a
// Boost.Compute user writes them (boost::compute::kernel::set_arg for the
// time step before every launch, command_queue::enqueue_1d_range_kernel,
// wait_list for the cross-queue orderings), the commands raw.c's *_args
// loops issue.  Its device and context are the raw side's, wrapped, so
// that Boost.Compute's default device (system::default_device) never
// picks another platform; its queues, program, kernels and buffers are its
// own.  Boost.Compute asks for an event on every enqueue and releases it
// when the returned event goes: part of what its users pay.
#include "peer.h"

#include <boost/compute/core.hpp>
#include <boost/version.hpp>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>

namespace bc = boost::compute;

namespace {

double now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

struct boost_peer {
  bc::device dev;
  bc::context ctx;
  bc::command_queue q[6];
  bc::kernel tick, step_ab, step_ba, prod, cons[4], red;
  bc::buffer fx, fy, A, B, P, C[4], R;
  size_t g;
  int tiny_n, pp_n, fan_n;
};

[[noreturn]] void fail(const char *what, const std::exception &e) {
  std::fprintf(stderr, "clstream-bench: peer boost: %s: %s\n", what, e.what());
  std::exit(2);
}

double tiny_args(void *state) {
  boost_peer &p = *static_cast<boost_peer *>(state);
  try {
    double t = now();
    for (int i = 0; i < p.tiny_n; i++) {
      p.tick.set_arg(3, STEP_DT(i));
      p.q[0].enqueue_1d_range_kernel(p.tick, 0, p.g, 0);
    }
    p.q[0].finish();
    return now() - t;
  } catch (const std::exception &e) {
    fail("tiny-chain-args", e);
  }
}

double pingpong_args(void *state) {
  boost_peer &p = *static_cast<boost_peer *>(state);
  try {
    double t = now();
    bc::event prev;
    for (int i = 0; i < p.pp_n; i++) {
      p.step_ab.set_arg(3, STEP_DT(2 * i));
      bc::wait_list w;
      if (prev.get())
        w.insert(prev);
      bc::event e0 = p.q[0].enqueue_1d_range_kernel(p.step_ab, 0, p.g, 0, w);
      p.q[0].flush();
      p.step_ba.set_arg(3, STEP_DT(2 * i + 1));
      prev = p.q[1].enqueue_1d_range_kernel(p.step_ba, 0, p.g, 0, bc::wait_list(e0));
      p.q[1].flush();
    }
    p.q[1].finish();
    p.q[0].finish();
    return now() - t;
  } catch (const std::exception &e) {
    fail("ping-pong-args", e);
  }
}

double fan_args(void *state) {
  boost_peer &p = *static_cast<boost_peer *>(state);
  try {
    double t = now();
    bc::event ep, ec[4], er;
    for (int it = 0; it < p.fan_n; it++) {
      float dt = STEP_DT(it);
      // P is rewritten: after the consumers that read it.
      bc::wait_list wp;
      if (ec[0].get())
        for (int c = 0; c < 4; c++)
          wp.insert(ec[c]);
      p.prod.set_arg(3, dt);
      ep = p.q[0].enqueue_1d_range_kernel(p.prod, 0, p.g, 0, wp);
      p.q[0].flush();
      for (int c = 0; c < 4; c++) {
        // C[c] is rewritten: after the reducer that read it.
        bc::wait_list wc(ep);
        if (er.get())
          wc.insert(er);
        p.cons[c].set_arg(3, dt);
        ec[c] = p.q[1 + c].enqueue_1d_range_kernel(p.cons[c], 0, p.g, 0, wc);
        p.q[1 + c].flush();
      }
      bc::wait_list wr;
      for (int c = 0; c < 4; c++)
        wr.insert(ec[c]);
      p.red.set_arg(6, dt);
      er = p.q[5].enqueue_1d_range_kernel(p.red, 0, p.g, 0, wr);
      p.q[5].flush();
    }
    for (int i = 0; i < 6; i++)
      p.q[i].finish();
    return now() - t;
  } catch (const std::exception &e) {
    fail("fan-args", e);
  }
}

bc::buffer zeros(boost_peer &p, size_t n) {
  bc::buffer b(p.ctx, n * sizeof(float));
  float zero = 0;
  p.q[0].enqueue_fill_buffer(b, &zero, sizeof zero, 0, n * sizeof(float));
  return b;
}

} // namespace

extern "C" void peer_boost_init(const struct peer_setup *s, struct peer *out) {
  static char version[64];
  std::snprintf(version, sizeof version, "Boost.Compute %d.%d", BOOST_VERSION / 100000,
                BOOST_VERSION / 100 % 1000);
  boost_peer *p = new boost_peer;
  try {
    p->dev = bc::device(s->device);
    p->ctx = bc::context(s->context);
    for (int i = 0; i < 6; i++)
      p->q[i] = bc::command_queue(p->ctx, p->dev);
    bc::program prog = bc::program::create_with_source(s->source, p->ctx);
    try {
      prog.build();
    } catch (const bc::opencl_error &) {
      std::fprintf(stderr, "%s\n", prog.build_log().c_str());
      throw;
    }
    p->g = s->global;
    p->tiny_n = s->tiny_n, p->pp_n = s->pp_n, p->fan_n = s->fan_n;
    p->fx = zeros(*p, p->g), p->fy = zeros(*p, p->g);
    p->A = zeros(*p, p->g), p->B = zeros(*p, p->g), p->P = zeros(*p, p->g);
    p->R = zeros(*p, p->g);
    for (int c = 0; c < 4; c++)
      p->C[c] = zeros(*p, p->g);
    p->q[0].finish();
    // Buffers and the size set once, as raw.c does; the time step is set
    // before every launch.
    int n = (int)p->g;
    p->tick = prog.create_kernel("tick");
    p->tick.set_args(p->fx, p->fy, n);
    p->step_ab = prog.create_kernel("fstep");
    p->step_ab.set_args(p->A, p->B, n);
    p->step_ba = prog.create_kernel("fstep");
    p->step_ba.set_args(p->B, p->A, n);
    p->prod = prog.create_kernel("fstep");
    p->prod.set_args(p->A, p->P, n);
    for (int c = 0; c < 4; c++) {
      p->cons[c] = prog.create_kernel("fstep");
      p->cons[c].set_args(p->P, p->C[c], n);
    }
    p->red = prog.create_kernel("fred");
    p->red.set_args(p->C[0], p->C[1], p->C[2], p->C[3], p->R, n);
  } catch (const std::exception &e) {
    fail("setup", e);
  }
  *out = peer{"boost", version, p, tiny_args, pingpong_args, fan_args};
}
