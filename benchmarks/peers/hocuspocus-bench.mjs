// hocuspocus-bench: aweft-bench's workload (benchmarks/aweft_bench.cc) against a
// Hocuspocus server, with the same flags and the same JSON fields.
//
//   node hocuspocus-bench.mjs --url ws://127.0.0.1:7800/ --clients 101 --writers 1 --rate 1000
//        --duration 10 [--docs 1] [--light] [--node-pid PID] [--json FILE] [--prefix bench]
//        [--warmup S]
//
// What it mirrors, one for one:
//   - N clients, one WebSocket each; client c shares document PREFIX-(c % D); clients
//     0..W-1 are writers, the others readers. Readers count deliveries, writers do not
//     (they apply what they receive, as aweft-bench's writers do, but do not count it).
//   - A writer's edit sets one entry of the document's root Y.Map ("m"): the key is fixed
//     per writer ("w" + its index), the value the write's time in microseconds since this
//     process started (a fractional double, as aweft-bench writes NowMicros()), so a reader
//     in the same process measures end-to-end latency. One edit is one Yjs transaction and
//     one Sync-Update message, as HocuspocusProvider sends it.
//   - --rate R is commits per second over all writers: every 1e6*W/R microseconds every
//     writer writes once (the same ticks as aweft-bench). --rate 0 is flat out: every writer
//     writes once per turn of the event loop, skipping its turn while more than 256 KiB
//     wait in its socket's userland send queue (so Node cannot buffer without bound; the
//     cap rarely binds, since loopback kernel buffers take megabytes first).
//   - Full readers keep a Y.Doc, apply every update and read the changed key from a
//     Y.Map observer (what an application using Hocuspocus does). --light readers keep no
//     Y.Doc: they take every WebSocket message, read its envelope (document name, message
//     type, sync type) and, for an update, walk the first struct of the Yjs update by hand
//     (a few varints: struct count, client, clock, info byte, origins or parent and key,
//     ContentAny's length and the value's type tag) to the number it carries. No objects
//     are made and nothing is applied; it is the cheapest decode that still yields the
//     timestamp, like aweft-bench's light reader, which decodes frames but applies nothing.
//   - --warmup S (not in aweft-bench; default 0): writers first write as they will in the
//     window for S seconds, uncounted, so V8 has compiled the hot paths of the server and of
//     this generator before anything is measured (a cold start puts ~0.7 s of 100-300 ms
//     latencies into the window, enough to own its p99). Commits written in the warm-up are
//     not counted when they arrive in the window. run.sh uses it at a rate only: flat out,
//     a warm-up would leave seconds of backlog in the sockets.
//   - Server CPU (utime+stime from /proc/PID/stat) over the measured window plus the 500 ms
//     drain, and peak memory (VmHWM from /proc/PID/status), when --node-pid is given.
//
// JSON fields are aweft-bench's. "durable" and "durable_per_s" are null: Hocuspocus never
// tells a client that an edit is on disk (it saves a whole-document snapshot to SQLite on a
// debounce; README.md). What it does send after applying each update in memory is a
// SyncStatus message; those are counted in the extra field "acked" ("acked_per_s").
// "frame_bytes_per_commit" is measured: the mean WebSocket payload of the update messages
// readers received (aweft-bench computes its figure from a sample frame). Extra fields:
// "ready_clients", "bench_cpu_s" (this process, same window), "update_messages".
//
// Why raw `ws` sockets and not HocuspocusProvider: a provider per client brings its own
// Awareness (y-protocols' Awareness runs a periodic timer, and any awareness state a client
// publishes is relayed to every other client of the document: N^2 messages for N clients),
// event emitters, queues and a Y.Doc even where a light reader needs none. 1,000 of them in
// one Node process add per-client work that is no part of the workload, and on a 2-core
// machine the generator is already what runs out first. This file speaks the same
// protocol the provider speaks (Hocuspocus 3.x framing: varString document name, varUint
// message type, then y-sync) with one `ws` socket per client: Auth token, wait for
// Authenticated, SyncStep1, answer the server's SyncStep1 with SyncStep2, then updates. It
// leaves awareness out, which the aweft workload has no counterpart of.

import { execSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import WebSocket from "ws";
import * as Y from "yjs";
import * as encoding from "lib0/encoding";
import * as decoding from "lib0/decoding";

// Hocuspocus message types (@hocuspocus/server's MessageType) and y-sync's sub-types.
const kSync = 0, kAwareness = 1, kAuth = 2, kSyncReply = 4, kSyncStatus = 8;
const kStep1 = 0, kStep2 = 1, kUpdate = 2;
const kAuthToken = 0, kAuthDenied = 1, kAuthOk = 2;
const kRemote = Symbol("remote");
const kSendQueueCap = 256 * 1024;

function parse(argv) {
  const a = { url: "ws://127.0.0.1:7800/", clients: 10, writers: 1, docs: 1, rate: 0, duration: 5,
              light: false, nodePid: 0, json: "", prefix: "bench", warmup: 0 };
  for (let i = 0; i < argv.length; ++i) {
    const flag = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${flag} needs a value`);
      return argv[++i];
    };
    if (flag === "--url") a.url = next();
    else if (flag === "--clients") a.clients = Number(next());
    else if (flag === "--writers") a.writers = Number(next());
    else if (flag === "--docs") a.docs = Number(next());
    else if (flag === "--rate") a.rate = Number(next());
    else if (flag === "--duration") a.duration = Number(next());
    else if (flag === "--light") a.light = true;
    else if (flag === "--node-pid") a.nodePid = Number(next());
    else if (flag === "--json") a.json = next();
    else if (flag === "--prefix") a.prefix = next();
    else if (flag === "--warmup") a.warmup = Number(next());
    else throw new Error(`unknown flag ${flag} (see the header of hocuspocus-bench.mjs)`);
  }
  if (!(a.writers >= 1 && a.clients >= a.writers && a.docs >= 1)) {
    throw new Error("need 1 <= writers <= clients and docs >= 1");
  }
  return a;
}

const nowMicros = () => performance.now() * 1000;

let clockTicks = 100;
try { clockTicks = Number(execSync("getconf CLK_TCK").toString().trim()) || 100; } catch {}

function cpuTicks(pid) {
  const line = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = line.slice(line.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);  // utime, stime (fields 14 and 15).
}

function peakKiB(pid) {
  const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) : 0;
}

// Latencies in a growable Float32Array (millions of samples at 1,000 readers).
class Samples {
  constructor() { this.v = new Float32Array(1 << 20); this.n = 0; }
  push(x) {
    if (this.n === this.v.length) {
      const bigger = new Float32Array(this.v.length * 2);
      bigger.set(this.v);
      this.v = bigger;
    }
    this.v[this.n++] = x;
  }
  sorted() { return this.v.subarray(0, this.n).sort(); }
}

function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

// Counting starts with the measured window: a delivery counts when it arrives between the
// window's start and the end of the drain and carries a stamp from the window (so commits
// written during --warmup are neither written nor delivered in the figures).
const stats = { written: 0, acked: 0, delivered: 0, updateMessages: 0, updateBytes: 0,
                latency: new Samples(), counting: false, windowStart: Infinity };

function envelope(name, type) {
  const e = encoding.createEncoder();
  encoding.writeVarString(e, name);
  encoding.writeVarUint(e, type);
  return e;
}

function authMessage(name) {
  const e = envelope(name, kAuth);
  encoding.writeVarUint(e, kAuthToken);
  encoding.writeVarString(e, "");  // No onAuthenticate hook: any token passes.
  return encoding.toUint8Array(e);
}

function syncMessage(name, subtype, payload) {
  const e = envelope(name, kSync);
  encoding.writeVarUint(e, subtype);
  encoding.writeVarUint8Array(e, payload);
  return encoding.toUint8Array(e);
}

// Skips a varUint-prefixed string or byte array. (Not `d.pos += readVarUint(d)`: that
// reads d.pos before the varint moves it.)
function skipBytes(d) {
  const n = decoding.readVarUint(d);
  d.pos += n;
}

// The number a writer's update carries: walks the update's first struct (Yjs update
// format v1) without building anything. Returns NaN if the update is not that shape.
function stampOfUpdate(d) {
  if (decoding.readVarUint(d) < 1) return NaN;  // Number of client groups.
  if (decoding.readVarUint(d) < 1) return NaN;  // Structs in the first group.
  decoding.readVarUint(d);  // client
  decoding.readVarUint(d);  // clock
  const info = decoding.readUint8(d);
  if ((info & 0x1f) !== 8) return NaN;  // Not ContentAny (a map entry holding a number).
  if (info & 0x80) { decoding.readVarUint(d); decoding.readVarUint(d); }  // origin
  if (info & 0x40) { decoding.readVarUint(d); decoding.readVarUint(d); }  // right origin
  if ((info & 0xc0) === 0) {
    if (decoding.readVarUint(d) === 1) skipBytes(d);                       // parent: root key
    else { decoding.readVarUint(d); decoding.readVarUint(d); }            // parent: an item id
    if (info & 0x20) skipBytes(d);                                       // parentSub (the key)
  }
  if (decoding.readVarUint(d) < 1) return NaN;  // ContentAny's value count.
  switch (decoding.readUint8(d)) {
    case 123: return decoding.readFloat64(d);
    case 124: return decoding.readFloat32(d);
    case 125: return decoding.readVarInt(d);
    default: return NaN;
  }
}

const kEmptyUpdate = Y.encodeStateAsUpdate(new Y.Doc());

class Client {
  constructor(args, index, name, role) {
    this.name = name;
    this.role = role;  // "writer", "reader" or "light"
    this.ready = false;
    this.key = `w${index}`;
    if (role !== "light") {
      this.doc = new Y.Doc();
      this.map = this.doc.getMap("m");
      if (role === "writer") {
        this.doc.on("update", (update, origin) => {
          if (origin !== kRemote) this.send(syncMessage(this.name, kUpdate, update));
        });
      } else {
        this.map.observe((event) => {
          if (!stats.counting) return;
          const now = nowMicros();
          for (const key of event.keysChanged) {
            const stamp = this.map.get(key);
            if (typeof stamp !== "number") { ++stats.delivered; continue; }
            if (stamp < stats.windowStart) continue;  // Written during the warm-up.
            ++stats.delivered;
            stats.latency.push(now - stamp);
          }
        });
      }
    }
    this.ws = new WebSocket(args.url, { perMessageDeflate: false });
    this.ws.binaryType = "nodebuffer";
    this.ws.on("open", () => this.send(authMessage(this.name)));
    this.ws.on("message", (data) => this.receive(data));
    this.ws.on("error", (e) => { this.error = e.message; });
    this.opened = new Promise((resolve) => { this.ws.once("open", resolve); this.ws.once("close", resolve); });
  }

  send(bytes) {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(bytes);
  }

  receive(data) {
    const d = decoding.createDecoder(data);
    skipBytes(d);  // The document name: one per socket here, so skipped.
    const type = decoding.readVarUint(d);
    if (type === kSync || type === kSyncReply) {
      const subtype = decoding.readVarUint(d);
      if (subtype === kUpdate) {
        if (this.role === "light") {
          if (!stats.counting) return;
          const start = d.pos;
          const len = decoding.readVarUint(d);
          const stamp = stampOfUpdate(d);
          d.pos = start + len;
          if (stamp < stats.windowStart) return;  // Written during the warm-up.
          ++stats.updateMessages;
          stats.updateBytes += data.length;
          ++stats.delivered;
          if (stamp === stamp) stats.latency.push(nowMicros() - stamp);  // NaN: no stamp found.
          return;
        }
        if (this.role === "reader" && stats.counting) {
          ++stats.updateMessages;
          stats.updateBytes += data.length;
        }
        Y.applyUpdate(this.doc, decoding.readVarUint8Array(d), kRemote);
      } else if (subtype === kStep1) {
        // The server asks for what we have: SyncStep2 with our state (empty for readers).
        const sv = decoding.readVarUint8Array(d);
        const update = this.doc ? Y.encodeStateAsUpdate(this.doc, sv) : kEmptyUpdate;
        this.send(syncMessage(this.name, kStep2, update));
      } else if (subtype === kStep2) {
        const update = decoding.readVarUint8Array(d);
        if (this.doc) Y.applyUpdate(this.doc, update, kRemote);
        this.ready = true;
      }
    } else if (type === kSyncStatus) {
      if (stats.counting && this.role === "writer") ++stats.acked;
    } else if (type === kAuth) {
      const status = decoding.readVarUint(d);
      if (status === kAuthOk) {
        const sv = this.doc ? Y.encodeStateVector(this.doc) : new Uint8Array([0]);
        this.send(syncMessage(this.name, kStep1, sv));
      } else if (status === kAuthDenied) {
        this.error = "permission denied";
      }
    } else if (type === kAwareness) {
      // No awareness in this workload.
    }
  }

  write() {
    if (!this.ready || this.ws.readyState !== WebSocket.OPEN) return false;
    this.map.set(this.key, nowMicros());
    if (stats.counting) ++stats.written;
    return true;
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function run(args) {
  const nameOf = (c) => `${args.prefix}-${c % args.docs}`;
  const writers = [], readers = [];
  // Dial in waves of 200 so the server's listen backlog (511) never overflows.
  for (let c = 0; c < args.clients; c += 200) {
    const wave = [];
    for (let i = c; i < Math.min(args.clients, c + 200); ++i) {
      const role = i < args.writers ? "writer" : args.light ? "light" : "reader";
      const client = new Client(args, i, nameOf(i), role);
      (role === "writer" ? writers : readers).push(client);
      wave.push(client.opened);
    }
    await Promise.all(wave);
  }
  const all = writers.concat(readers);
  const settle = Date.now() + 30000;
  while (Date.now() < settle && !all.every((c) => c.ready)) await sleep(20);
  const readyClients = all.filter((c) => c.ready).length;
  const errors = all.filter((c) => c.error).map((c) => c.error);
  if (readyClients < all.length) {
    console.error(`hocuspocus-bench: ${all.length - readyClients} of ${all.length} clients not synced after 30 s` +
                  (errors.length ? ` (first error: ${errors[0]})` : ""));
  }

  // Writers write until `untilMs` (performance.now() time), at the rate or flat out.
  const intervalUs = args.rate > 0 ? 1e6 * args.writers / args.rate : 0;
  let nextWrite = nowMicros();
  const drive = (untilMs) => new Promise((resolve) => {
    if (intervalUs === 0) {
      const turn = () => {
        if (performance.now() >= untilMs) return resolve();
        for (const w of writers) if (w.ws.bufferedAmount < kSendQueueCap) w.write();
        setImmediate(turn);
      };
      turn();
      return;
    }
    const tick = () => {
      let now = nowMicros();
      if (now >= untilMs * 1000) return resolve();
      while (now >= nextWrite) {
        for (const w of writers) w.write();
        nextWrite += intervalUs;
        if (nextWrite < now - 1e5) nextWrite = now;  // Fell behind.
        now = nowMicros();
      }
      setTimeout(tick, Math.max(0, (Math.min(nextWrite, untilMs * 1000) - now) / 1000));
    };
    tick();
  });
  if (args.warmup > 0) await drive(performance.now() + args.warmup * 1000);

  const cpuBefore = args.nodePid ? cpuTicks(args.nodePid) : 0;
  const benchBefore = process.cpuUsage();
  const begin = performance.now();
  stats.windowStart = begin * 1000;
  nextWrite = stats.windowStart;  // The window's ticks start with it, as aweft-bench's do.
  stats.counting = true;
  await drive(begin + args.duration * 1000);
  const seconds = (performance.now() - begin) / 1000;
  await sleep(500);  // Drain what is in flight.
  stats.counting = false;
  const cpuAfter = args.nodePid ? cpuTicks(args.nodePid) : 0;
  const benchCpu = process.cpuUsage(benchBefore);
  const nodeCpu = (cpuAfter - cpuBefore) / clockTicks;

  const lat = stats.latency.sorted();
  const p50 = percentile(lat, 0.5), p99 = percentile(lat, 0.99), p999 = percentile(lat, 0.999);
  const max = lat.length ? lat[lat.length - 1] : 0;
  const frameBytes = stats.updateMessages ? stats.updateBytes / stats.updateMessages : 0;
  const out = {
    clients: args.clients, writers: args.writers, docs: args.docs, rate: args.rate,
    light: args.light, seconds, written: stats.written, commits_per_s: stats.written / seconds,
    durable: null, durable_per_s: null,
    delivered: stats.delivered, deliveries_per_s: stats.delivered / seconds,
    latency_us: { p50, p99, p999, max },
    frame_bytes_per_commit: frameBytes,
    acked: stats.acked, acked_per_s: stats.acked / seconds,
    warmup_s: args.warmup, ready_clients: readyClients, update_messages: stats.updateMessages,
    bench_cpu_s: (benchCpu.user + benchCpu.system) / 1e6,
  };
  if (args.nodePid) {
    out.node_cpu_s = nodeCpu;
    out.node_cpu_us_per_delivery = stats.delivered ? 1e6 * nodeCpu / stats.delivered : 0;
    out.node_peak_kib = peakKiB(args.nodePid);
  }
  const f0 = (x) => x.toFixed(0);
  console.log(`clients ${args.clients}, writers ${args.writers}, documents ${args.docs}, ` +
              `${args.light ? "light" : "full"} readers, ${seconds.toFixed(1)} s (Hocuspocus)`);
  console.log(`  written           ${f0(stats.written / seconds).padStart(10)} commits/s (${stats.written})`);
  console.log(`  durable                    - (Hocuspocus confirms no save; ${f0(stats.acked / seconds)}/s applied-in-memory acks)`);
  console.log(`  delivered         ${f0(stats.delivered / seconds).padStart(10)} commits/s to readers`);
  console.log(`  latency           p50 ${f0(p50)} us, p99 ${f0(p99)} us, p99.9 ${f0(p999)} us, max ${f0(max)} us`);
  console.log(`  bytes per commit  ${frameBytes.toFixed(1)} (mean update message received)`);
  if (args.nodePid) {
    console.log(`  server            ${nodeCpu.toFixed(2)} s CPU, ${out.node_cpu_us_per_delivery.toFixed(2)} us CPU per delivery, peak ${out.node_peak_kib} KiB`);
  }
  console.log(`  generator         ${out.bench_cpu_s.toFixed(2)} s CPU over the window (user ${(benchCpu.user / 1e6).toFixed(2)} s, system ${(benchCpu.system / 1e6).toFixed(2)} s)`);
  if (args.json) writeFileSync(args.json, JSON.stringify(out) + "\n");
  for (const c of all) c.ws.terminate();
  return stats.written > 0 ? 0 : 1;
}

try {
  process.exitCode = await run(parse(process.argv.slice(2)));
} catch (e) {
  console.error(`hocuspocus-bench: ${e.message}`);
  process.exitCode = 2;
}
