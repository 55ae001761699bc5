//===- EmulatedTrace.cpp - Simulated schedule on the emulated device ------===//
//
// Implements `Schedule`: the log is kept in enqueue order and simulated when
// a summary or the trace is asked for, because a node's seconds are split
// over all of its work in the log (known only at the end; a kernel fused
// from several nodes' ops takes its share of each). The simulation
// walks the log once: per stream the time it is free, per event record the
// time its stream reached it, and the host's time (raised by its
// synchronisations), so the result is a function of the log alone.
//
//===----------------------------------------------------------------------===//

#include "EmulatedTrace.h"

#include <algorithm>
#include <cstdio>

using namespace joint::cuda::emu;

namespace {

/// The nodes of a work label: a kernel fused from several nodes' ops is
/// named by them all, joined by ", " (joint-gpu-set-node).
std::vector<std::string> splitNodes(const std::string &label) {
  std::vector<std::string> nodes;
  size_t start = 0;
  while (true) {
    size_t comma = label.find(", ", start);
    nodes.push_back(label.substr(start, comma - start));
    if (comma == std::string::npos)
      return nodes;
    start = comma + 2;
  }
}

/// `text` as the body of a JSON string.
std::string escape(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

/// Seconds as microseconds with 3 decimals (nanoseconds).
std::string micros(double seconds) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.3f", seconds * 1e6);
  return buf;
}

std::string exact(double value) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", value);
  return buf;
}

/// "kernel 'k' (node 'n') on stream 1" -> "kernel 'k'".
std::string shortName(const std::string &label) {
  size_t cut = std::min(label.find(" (node '"), label.find(" on stream "));
  return label.substr(0, cut);
}

const char *category(TraceKind kind) {
  switch (kind) {
  case TraceKind::Work:
    return "work";
  case TraceKind::CopyToHost:
    return "copy D2H";
  case TraceKind::CopyToDevice:
    return "copy H2D";
  case TraceKind::Memory:
    return "memory";
  }
  return "work";
}

} // namespace

void Schedule::start(double bytesPerSecond) {
  on = true;
  linkBytesPerSecond = bytesPerSecond;
  log.clear();
}

void Schedule::setNodeSeconds(const std::string &node, double seconds) {
  nodeSeconds[node] = seconds;
}

void Schedule::operation(unsigned stream, const TraceOp &op,
                         const std::string &node, const std::string &what) {
  if (!on)
    return;
  Logged l{Entry::Operation, stream, 0, op, node};
  if (l.op.name.empty())
    l.op.name = shortName(what);
  log.push_back(std::move(l));
}

uint64_t Schedule::record(unsigned stream) {
  uint64_t id = nextRecord++;
  if (on)
    log.push_back({Entry::Record, stream, id, {}, {}});
  return id;
}

void Schedule::wait(unsigned stream, uint64_t id) {
  if (on && id)
    log.push_back({Entry::Wait, stream, id, {}, {}});
}

void Schedule::hostWaitsStream(unsigned stream) {
  if (on)
    log.push_back({Entry::HostStream, stream, 0, {}, {}});
}

void Schedule::hostWaitsRecord(uint64_t id) {
  if (on && id)
    log.push_back({Entry::HostRecord, 0, id, {}, {}});
}

Schedule::Simulation Schedule::simulate() const {
  Simulation sim;
  std::map<std::string, uint64_t> workOf;
  for (const Logged &l : log)
    if (l.entry == Entry::Operation && l.op.kind == TraceKind::Work) {
      for (const std::string &node : splitNodes(l.node))
        ++workOf[node];
      sim.computeStreams[l.stream] = true;
    }
  std::map<unsigned, double> freeAt;
  std::map<uint64_t, std::pair<unsigned, double>> records;
  double host = 0, end = 0;
  JointEmuTraceSummary &s = sim.summary;
  for (size_t i = 0; i < log.size(); ++i) {
    const Logged &l = log[i];
    double ready = std::max(freeAt[l.stream], host);
    switch (l.entry) {
    case Entry::Operation: {
      double seconds = 0;
      if (l.op.kind == TraceKind::Work) {
        // A fused kernel runs several nodes: its share of each one's.
        bool costed = false;
        for (const std::string &node : splitNodes(l.node)) {
          auto it = nodeSeconds.find(node);
          if (it == nodeSeconds.end())
            continue;
          costed = true;
          seconds += it->second / double(workOf[node]);
        }
        if (!costed)
          ++s.uncosted_work;
        s.work_seconds += seconds;
      } else if (l.op.kind != TraceKind::Memory) {
        seconds = double(l.op.bytes) / linkBytesPerSecond;
        s.transfer_seconds += seconds;
      }
      ++s.operations;
      sim.slices.push_back({i, ready, seconds, 0});
      freeAt[l.stream] = ready + seconds;
      break;
    }
    case Entry::Record:
      records[l.id] = {l.stream, ready};
      break;
    case Entry::Wait: {
      auto it = records.find(l.id);
      if (it == records.end() || it->second.second <= ready) {
        freeAt[l.stream] = ready;
        break;
      }
      auto [on, at] = it->second;
      sim.slices.push_back({i, ready, at - ready, on});
      if (on != l.stream && sim.computeStreams.count(l.stream))
        s.exposed_transfer_seconds += at - ready;
      freeAt[l.stream] = at;
      break;
    }
    case Entry::HostStream:
      if (l.stream == 0) {
        for (auto &[stream, at] : freeAt)
          host = std::max(host, at);
      } else {
        host = std::max(host, freeAt[l.stream]);
      }
      break;
    case Entry::HostRecord:
      if (auto it = records.find(l.id); it != records.end())
        host = std::max(host, it->second.second);
      break;
    }
    end = std::max({end, host, freeAt[l.stream]});
  }
  s.step_seconds = end;
  return sim;
}

JointEmuTraceSummary Schedule::summary() const { return simulate().summary; }

std::string Schedule::json() const {
  Simulation sim = simulate();
  std::string out = "{\"displayTimeUnit\": \"ns\",\n\"traceEvents\": [\n";
  out += "{\"ph\": \"M\", \"pid\": 1, \"tid\": 0, \"name\": "
         "\"process_name\", \"args\": {\"name\": \"emulated device "
         "(simulated time)\"}}";
  // Tracks: "(compute)" for streams that run work, "(transfer)" for the
  // others that copy between host and device.
  std::map<unsigned, bool> streams; ///< stream -> copies host<->device
  for (const Logged &l : log)
    streams[l.stream] |=
        l.entry == Entry::Operation && (l.op.kind == TraceKind::CopyToHost ||
                                        l.op.kind == TraceKind::CopyToDevice);
  for (auto &[stream, copies] : streams) {
    if (stream == 0)
      continue;
    const char *role = sim.computeStreams.count(stream) ? " (compute)"
                       : copies                         ? " (transfer)"
                                                        : "";
    out += ",\n{\"ph\": \"M\", \"pid\": 1, \"tid\": " + std::to_string(stream) +
           ", \"name\": \"thread_name\", \"args\": {\"name\": \"stream " +
           std::to_string(stream) + role + "\"}}";
  }
  for (const Placed &p : sim.slices) {
    const Logged &l = log[p.log];
    std::string name, cat, args;
    if (l.entry == Entry::Wait) {
      name = "wait";
      cat = "wait";
      args = "\"on_stream\": " + std::to_string(p.onStream);
    } else {
      name = l.op.name;
      cat = category(l.op.kind);
      args = "\"node\": \"" + escape(l.node) + "\"";
      if (l.op.kind == TraceKind::CopyToHost ||
          l.op.kind == TraceKind::CopyToDevice)
        args += ", \"bytes\": " + std::to_string(l.op.bytes);
      std::vector<std::string> nodes = splitNodes(l.node);
      if (l.op.kind == TraceKind::Work &&
          std::none_of(nodes.begin(), nodes.end(), [&](const std::string &n) {
            return nodeSeconds.count(n) != 0;
          }))
        args += ", \"cost\": \"none\"";
    }
    out +=
        ",\n{\"ph\": \"X\", \"pid\": 1, \"tid\": " + std::to_string(l.stream) +
        ", \"name\": \"" + escape(name) + "\", \"cat\": \"" + cat +
        "\", \"ts\": " + micros(p.start) + ", \"dur\": " + micros(p.seconds) +
        ", \"args\": {" + args + "}}";
  }
  const JointEmuTraceSummary &s = sim.summary;
  out +=
      "\n],\n\"joint\": {\"step_seconds\": " + exact(s.step_seconds) +
      ", \"exposed_transfer_seconds\": " + exact(s.exposed_transfer_seconds) +
      ", \"work_seconds\": " + exact(s.work_seconds) +
      ", \"transfer_seconds\": " + exact(s.transfer_seconds) +
      ", \"operations\": " + std::to_string(s.operations) +
      ", \"uncosted_work\": " + std::to_string(s.uncosted_work) +
      ", \"link_bytes_per_second\": " + exact(linkBytesPerSecond) + "}}\n";
  return out;
}
