// Runs the same workloads against aweft-node (with aweft-bench) and Hocuspocus (with
// hocuspocus-bench.mjs), one after the other on this machine, each server started fresh
// for every point, and writes a markdown table of both sides' figures and their ratio.
// Started by run.sh (which installs the npm packages first); flags: see usage() below.

import { spawn, execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync, existsSync } from "node:fs";
import { tmpdir, cpus, totalmem } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../..");

function usage() {
  return `usage: benchmarks/peers/run.sh [flags]
  --node PATH           aweft-node binary     (default build/node/aweft-node)
  --bench PATH          aweft-bench binary    (default build/benchmarks/aweft-bench)
  --duration S          seconds per scenario point (default 10)
  --search-duration S   seconds per point of the rate search (default 10)
  --quick               a smoke run: 3 s per point, 2 s per search point, a short search
  --only LIST           comma-separated scenario names or letters (a,b,c,d,e, or a-rate-full, ...)
  --rate-a R --rate-b R --rate-c R   the stated rates (commits/s over all writers; 200, 20, 1000)
  --search-light | --search-full     readers used by the rate search (default light)
  --out DIR             raw JSON and logs   (default benchmarks/peers/results)
  --table FILE          the markdown table  (default benchmarks/peers/last-run.md)
  --port P              first port to use   (default 17400; each server start takes the next)
  --report-only         measure nothing: rebuild the table from the --out directory's run.json
  --hp-warmup S         seconds Hocuspocus points at a rate write before their window, uncounted,
                        so V8 has compiled the hot paths (default 2; aweft-bench has no warm-up)`;
}

function parse(argv) {
  const o = { node: join(root, "build/node/aweft-node"), bench: join(root, "build/benchmarks/aweft-bench"),
              duration: 10, searchDuration: 10, quick: false, only: null, rateA: 200, rateB: 20, rateC: 1000,
              searchLight: true, out: join(here, "results"), table: join(here, "last-run.md"), port: 17400,
              hpWarmup: 2 };
  for (let i = 0; i < argv.length; ++i) {
    const flag = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${flag} needs a value`);
      return argv[++i];
    };
    if (flag === "--node") o.node = resolve(next());
    else if (flag === "--bench") o.bench = resolve(next());
    else if (flag === "--duration") o.duration = Number(next());
    else if (flag === "--search-duration") o.searchDuration = Number(next());
    else if (flag === "--quick") o.quick = true;
    else if (flag === "--only") o.only = next().split(",");
    else if (flag === "--rate-a") o.rateA = Number(next());
    else if (flag === "--rate-b") o.rateB = Number(next());
    else if (flag === "--rate-c") o.rateC = Number(next());
    else if (flag === "--search-light") o.searchLight = true;
    else if (flag === "--search-full") o.searchLight = false;
    else if (flag === "--out") o.out = resolve(next());
    else if (flag === "--table") o.table = resolve(next());
    else if (flag === "--port") o.port = Number(next());
    else if (flag === "--hp-warmup") o.hpWarmup = Number(next());
    else if (flag === "--report-only") o.reportOnly = true;
    else if (flag === "--help" || flag === "-h") { console.log(usage()); process.exit(0); }
    else throw new Error(`unknown flag ${flag}\n${usage()}`);
  }
  if (o.quick) {
    o.duration = Math.min(o.duration, 3);
    o.searchDuration = Math.min(o.searchDuration, 2);
  }
  return o;
}

const opts = parse(process.argv.slice(2));
const saved = opts.reportOnly ? JSON.parse(readFileSync(join(opts.out, "run.json"), "utf8")) : null;
if (saved) {
  const i = saved.info;
  Object.assign(opts, { duration: i.duration, searchDuration: i.search_duration, quick: i.quick, hpWarmup: i.hp_warmup,
                        rateA: i.rates.a, rateB: i.rates.b, rateC: i.rates.c, searchLight: i.search_light ?? true });
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (...a) => console.error(`[${new Date().toISOString().slice(11, 19)}]`, ...a);

// Snapshots of the binaries, so a rebuild during the run cannot change what is measured.
let work = null, aweftNode = null, aweftBench = null;
if (!saved) {
  work = mkdtempSync(join(tmpdir(), "aweft-peers-"));
  const bin = join(work, "bin");
  mkdirSync(bin);
  for (const [key, name] of [["node", "aweft-node"], ["bench", "aweft-bench"]]) {
    if (!existsSync(opts[key])) throw new Error(`${opts[key]} is missing: build it (cmake --build build --target aweft-node aweft-bench) or pass --${key}`);
    copyFileSync(opts[key], join(bin, name));
    chmodSync(join(bin, name), 0o755);
  }
  aweftNode = join(bin, "aweft-node");
  aweftBench = join(bin, "aweft-bench");
}
mkdirSync(opts.out, { recursive: true });
let nextPort = opts.port;

// --- servers -------------------------------------------------------------------------

function startServer(side) {
  const port = nextPort++;
  const dir = mkdtempSync(join(work, `${side}-`));
  const [cmd, args] = side === "aweft"
    ? [aweftNode, ["--data", join(dir, "data"), "--listen", `127.0.0.1:${port}`, "--admin", "off"]]
    : [process.execPath, [join(here, "hocuspocus-server.mjs"), "--port", String(port), "--db", join(dir, "hocuspocus.sqlite")]];
  const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  return new Promise((resolveStart, reject) => {
    const timer = setTimeout(() => reject(new Error(`${side} server did not start:\n${output}`)), 20000);
    const onData = (chunk) => {
      output += chunk;
      if (/listening ws:\/\//.test(output)) {
        clearTimeout(timer);
        resolveStart({ side, child, pid: child.pid, port, dir, url: `ws://127.0.0.1:${port}/`, output: () => output });
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code) => { clearTimeout(timer); reject(new Error(`${side} server exited (${code}):\n${output}`)); });
  });
}

async function stopServer(server) {
  const exited = new Promise((r) => server.child.once("exit", r));
  server.child.kill("SIGTERM");
  const done = await Promise.race([exited.then(() => true), sleep(15000).then(() => false)]);
  if (!done) { server.child.kill("SIGKILL"); await exited; }
  rmSync(server.dir, { recursive: true, force: true });
}

// --- CPU of the generator, sampled from outside the same way for both ----------------

function ticks(pid) {
  try {
    const line = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = line.slice(line.lastIndexOf(")") + 2).split(" ");
    return Number(f[11]) + Number(f[12]);
  } catch { return null; }
}
const clk = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100;

// --- one point -----------------------------------------------------------------------

async function runPoint(side, point, duration, tag) {
  const server = await startServer(side);
  const json = join(opts.out, `${tag}.${side}.json`);
  rmSync(json, { force: true });
  const args = ["--url", server.url, "--clients", String(point.clients), "--writers", String(point.writers),
                "--docs", String(point.docs), "--rate", String(point.rate), "--duration", String(duration),
                "--node-pid", String(server.pid), "--json", json, "--prefix", "bench"];
  if (point.light) args.push("--light");
  if (side === "aweft" && point.window) args.push("--window", String(point.window));
  // At a rate only: flat out, a warm-up would leave a backlog of seconds in the sockets.
  if (side === "hocuspocus" && opts.hpWarmup > 0 && point.rate > 0) args.push("--warmup", String(opts.hpWarmup));
  const [cmd, cargs] = side === "aweft" ? [aweftBench, args] : [process.execPath, [join(here, "hocuspocus-bench.mjs"), ...args]];
  const gen = spawn(cmd, cargs, { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  gen.stdout.on("data", (c) => { out += c; });
  gen.stderr.on("data", (c) => { out += c; });
  // Generator CPU per half second; the median slot is the measured window's level
  // (the window is most of the generator's life), the busiest slot its peak.
  const slots = [];
  let last = ticks(gen.pid), lastAt = Date.now();
  const sampler = setInterval(() => {
    const t = ticks(gen.pid), at = Date.now();
    if (t !== null && last !== null) slots.push((t - last) / clk / ((at - lastAt) / 1000));
    last = t; lastAt = at;
  }, 500);
  const code = await new Promise((r) => gen.on("exit", r));
  clearInterval(sampler);
  await stopServer(server);
  writeFileSync(join(opts.out, `${tag}.${side}.log`), `${cmd} ${cargs.join(" ")}\n${out}\nserver output:\n${server.output()}`);
  let result = null;
  try { result = JSON.parse(readFileSync(json, "utf8")); } catch {}
  if (code !== 0 || !result) log(`${tag} ${side}: generator exited ${code}${result ? "" : ", no JSON"}\n${out}`);
  const sorted = slots.slice().sort((a, b) => a - b);
  const gen_cores = sorted.length ? sorted[Math.floor(sorted.length / 2)] : null;
  const gen_cores_peak = sorted.length ? sorted[sorted.length - 1] : null;
  if (result) {
    result.gen_cores = gen_cores;
    result.gen_cores_peak = gen_cores_peak;
    writeFileSync(json, JSON.stringify(result) + "\n");
  }
  return result;
}

// --- scenarios -----------------------------------------------------------------------

const A = { clients: 101, writers: 1, docs: 1 };
const B = { clients: 1010, writers: 10, docs: 1 };
const C = { clients: 2000, writers: 1000, docs: 1000 };
// (e) intake: many writers, each alone on its document, no readers. aweft-bench's writers
// keep at most 512 edits unconfirmed (--window); Hocuspocus' skip a turn past 256 KiB queued.
const E = { clients: 20, writers: 20, docs: 20, window: 512 };
const scenarios = [
  { name: "a-rate-full", group: "a", ...A, rate: opts.rateA, light: false },
  { name: "a-rate-light", group: "a", ...A, rate: opts.rateA, light: true },
  { name: "a-flat-full", group: "a", ...A, rate: 0, light: false },
  { name: "a-flat-light", group: "a", ...A, rate: 0, light: true },
  { name: "b-rate-full", group: "b", ...B, rate: opts.rateB, light: false },
  { name: "b-rate-light", group: "b", ...B, rate: opts.rateB, light: true },
  { name: "b-flat-full", group: "b", ...B, rate: 0, light: false },
  { name: "b-flat-light", group: "b", ...B, rate: 0, light: true },
  { name: "c-rate-full", group: "c", ...C, rate: opts.rateC, light: false },
  { name: "c-flat-full", group: "c", ...C, rate: 0, light: false },
  { name: "e-flat-intake", group: "e", ...E, rate: 0, light: false },
];
const wanted = (s) => !opts.only || opts.only.includes(s.name) || opts.only.includes(s.group);
const sides = ["aweft", "hocuspocus"];

// The rate a side holds: it writes at least 95% of the asked rate, its readers receive at
// least 95% of what was written times the readers, and p99 latency stays under 50 ms.
const kP99LimitUs = 50000;
function holds(r, point) {
  if (!r) return false;
  const readers = point.clients - point.writers;
  return r.commits_per_s >= 0.95 * point.rate && r.delivered >= 0.95 * r.written * readers / point.docs &&
         r.latency_us.p99 < kP99LimitUs;
}

async function search(side, base) {
  const tried = [];
  const probe = async (rate) => {
    const point = { ...base, rate: Math.round(rate) };
    const r = await runPoint(side, point, opts.searchDuration, `d-search-${point.rate}`);
    const ok = holds(r, point);
    tried.push({ rate: point.rate, ok, p99_ms: r ? r.latency_us.p99 / 1000 : null,
                 commits_per_s: r ? r.commits_per_s : null, node_cpu_us_per_delivery: r ? r.node_cpu_us_per_delivery : null,
                 gen_cores: r ? r.gen_cores : null });
    log(`  search ${side} ${point.rate}/s: ${ok ? "holds" : "does not hold"} (written ${r ? r.commits_per_s.toFixed(0) : "-"}/s, p99 ${r ? (r.latency_us.p99 / 1000).toFixed(1) : "-"} ms)`);
    return ok;
  };
  let good = 0, bad = 0, rate = 100;
  const cap = 204800;
  while (rate <= cap) {
    if (await probe(rate)) { good = rate; rate *= 2; } else { bad = rate; break; }
  }
  if (bad === 0) return { best: good, tried, capped: true };
  if (good === 0) {
    // Even 100/s fails: bisect below it, down to 25/s.
    let lo = 0, hi = bad;
    while (hi - lo > 25) { const mid = (lo + hi) / 2; if (await probe(mid)) lo = mid; else hi = mid; }
    return { best: Math.round(lo), tried, capped: false };
  }
  const steps = opts.quick ? 2 : 4;  // 4 halvings: within 1/16 of the doubling step.
  let lo = good, hi = bad;
  for (let i = 0; i < steps; ++i) {
    const mid = (lo + hi) / 2;
    if (await probe(mid)) lo = mid; else hi = mid;
  }
  return { best: Math.round(lo), tried, capped: false };
}

// --- the run -------------------------------------------------------------------------

function version(cmd, args) {
  try { return execFileSync(cmd, args, { stdio: ["ignore", "pipe", "pipe"] }).toString().trim(); } catch { return "?"; }
}
const pkg = (name) => JSON.parse(readFileSync(join(here, "node_modules", name, "package.json"), "utf8")).version;
const started = saved ? new Date(saved.info.started) : new Date();
let info, results, searchResults = null;
if (saved) {
  ({ info, results, search: searchResults } = saved);
} else {
  info = {
    started: started.toISOString(),
    command: `benchmarks/peers/run.sh ${process.argv.slice(2).join(" ")}`.trim(),
    machine: `${cpus().length} cores (${cpus()[0]?.model ?? "?"}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${version("uname", ["-sr"])}`,
    os: version("sh", ["-c", ". /etc/os-release && echo $PRETTY_NAME"]),
    node: process.version,
    aweft_node: version(aweftNode, ["--version"]),
    aweft_commit: version("git", ["-C", root, "describe", "--always", "--dirty"]),
    binaries: { node: opts.node, bench: opts.bench,
                node_sha256: version("sha256sum", [aweftNode]).slice(0, 12), bench_sha256: version("sha256sum", [aweftBench]).slice(0, 12) },
    hocuspocus: { server: pkg("@hocuspocus/server"), sqlite: pkg("@hocuspocus/extension-sqlite"),
                  yjs: pkg("yjs"), sqlite3: pkg("sqlite3"), ws: pkg("ws") },
    duration: opts.duration, search_duration: opts.searchDuration, quick: opts.quick, hp_warmup: opts.hpWarmup,
    rates: { a: opts.rateA, b: opts.rateB, c: opts.rateC }, search_light: opts.searchLight,
  };
  log(`aweft ${info.aweft_node} (${info.aweft_commit}), Hocuspocus ${info.hocuspocus.server}, Node ${info.node}`);

  results = {};
  for (const s of scenarios.filter(wanted)) {
    results[s.name] = {};
    for (const side of sides) {
      log(`${s.name} ${side}: ${s.clients} clients, ${s.writers} writers, ${s.docs} docs, ${s.rate || "flat out"}${s.rate ? "/s" : ""}, ${s.light ? "light" : "full"} readers`);
      results[s.name][side] = await runPoint(side, s, opts.duration, s.name);
    }
  }
  if (!opts.only || opts.only.includes("d")) {
    const base = { ...A, light: opts.searchLight };
    searchResults = {};
    for (const side of sides) {
      log(`d search ${side}: scenario (a), ${base.light ? "light" : "full"} readers`);
      searchResults[side] = await search(side, base);
    }
  }
  const finished = new Date();
  info.minutes = ((finished - started) / 60000).toFixed(1);
  writeFileSync(join(opts.out, "run.json"), JSON.stringify({ info, results, search: searchResults }, null, 1) + "\n");
}

// --- the table -----------------------------------------------------------------------

const num = (x, d = 0) => (x === null || x === undefined || Number.isNaN(x)) ? "–"
  : x.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d });
const ratio = (a, h) => (a == null || h == null || h === 0 || Number.isNaN(a) || Number.isNaN(h)) ? "–" : `${num(a / h, a / h >= 10 ? 0 : 2)}×`;
const describe = (s) => `${s.name} (${s.docs === 1 ? "1 doc" : `${num(s.docs)} docs`}, ${s.writers} w / ${num(s.clients - s.writers)} r, ${s.rate ? `${num(s.rate)}/s` : "flat out"}, ${s.light ? "light" : "full"})`;
const rows = scenarios.filter((s) => results[s.name]);
const lines = [];
const table = (title, note, figures) => {
  lines.push(`### ${title}`, "", note, "");
  const head = ["point"], rule = ["---"];
  for (const f of figures) { head.push(`${f.label} aweft`, "Hocuspocus", "a/h"); rule.push("---:", "---:", "---:"); }
  lines.push(`| ${head.join(" | ")} |`, `| ${rule.join(" | ")} |`);
  for (const s of rows) {
    const a = results[s.name].aweft, h = results[s.name].hocuspocus;
    const cells = [describe(s)];
    for (const f of figures) {
      const va = a ? f.get(a) : null, vh = h ? f.get(h) : null;
      const shown = f.ratio === false ? "" : (f.atRateOnly && !s.rate) ? "n/m" : ratio(va, vh);
      cells.push(num(va, f.digits ?? 0), num(vh, f.digits ?? 0), shown);
    }
    lines.push(`| ${cells.join(" | ")} |`);
  }
  lines.push("");
};
lines.push(`## aweft-node vs Hocuspocus, ${started.toISOString().slice(0, 10)}`, "",
  `Command: \`${info.command}\` (${info.minutes} min). Machine: ${info.machine}, ${info.os}.`,
  `${info.aweft_node} (tree ${info.aweft_commit}; binaries ${info.binaries.node} sha256 ${info.binaries.node_sha256}…, ${info.binaries.bench} ${info.binaries.bench_sha256}…),`,
  `durability \`sync\` (the default), driven by aweft-bench;`,
  `Hocuspocus ${info.hocuspocus.server} with @hocuspocus/extension-sqlite ${info.hocuspocus.sqlite} (sqlite3 ${info.hocuspocus.sqlite3}), yjs ${info.hocuspocus.yjs},`,
  `ws ${info.hocuspocus.ws}, Node ${info.node}, driven by hocuspocus-bench.mjs. Every point starts its server fresh`,
  `(empty data directory or SQLite file); ${opts.duration} s per point, ${opts.searchDuration} s per search point` +
    (opts.hpWarmup > 0 ? `; Hocuspocus points at a rate first write ${opts.hpWarmup} s uncounted so V8 is warm (aweft-bench has no warm-up)` : "") +
    `; servers and generators`,
  `share the machine's cores. "w / r" are writers / readers (clients = w + r); rates are commits per second`,
  `over all writers. Ratios are aweft ÷ Hocuspocus throughout: above 1 means aweft's figure is the larger one`,
  `(better for throughput, worse for latency, CPU and memory).`, "");
table("Throughput", "Commits written per second and commits delivered to readers per second. Flat out, \"written\" counts the edits writers made; most of them wait in client buffers and sockets (the server takes far fewer), so delivered/s is the throughput figure there, and latency is a queueing delay that grows through the window: their ratios are shown as n/m (not meaningful).", [
  { label: "written/s", get: (r) => r.commits_per_s, atRateOnly: true },
  { label: "delivered/s", get: (r) => r.deliveries_per_s },
]);
table("Latency (write to reader, ms)", "End-to-end, writer and readers in the generator's process.", [
  { label: "p50", get: (r) => r.latency_us.p50 / 1000, digits: 1, atRateOnly: true },
  { label: "p99", get: (r) => r.latency_us.p99 / 1000, digits: 1, atRateOnly: true },
  { label: "p99.9", get: (r) => r.latency_us.p999 / 1000, digits: 1, atRateOnly: true },
  { label: "max", get: (r) => r.latency_us.max / 1000, digits: 1, atRateOnly: true },
]);
table("Server cost", "Server CPU (utime+stime from /proc/PID/stat over the window and the 500 ms drain) per commit delivered, the cores it used, and its peak resident memory (VmHWM).", [
  { label: "CPU µs/delivery", get: (r) => r.node_cpu_us_per_delivery, digits: 2 },
  { label: "server cores", get: (r) => r.node_cpu_s / (r.seconds + 0.5), digits: 2 },
  { label: "peak MiB", get: (r) => r.node_peak_kib / 1024, digits: 0 },
]);
table("Generator, bytes and durability", "Generator cores: the median half-second of the generator process's CPU, sampled from outside for both (1.00 = one core busy: the generator, not the server, may be the limit). Bytes per commit: aweft-bench's sample commits frame; Hocuspocus' mean update message as received. Durable/s: commits the server confirmed stored; Hocuspocus confirms no save (–).", [
  { label: "generator cores", get: (r) => r.gen_cores, digits: 2 },
  { label: "bytes/commit", get: (r) => r.frame_bytes_per_commit, digits: 1 },
  { label: "durable/s", get: (r) => r.durable_per_s, ratio: false },
]);
const intake = rows.filter((s) => s.group === "e");
if (intake.length) {
  lines.push("### Intake: commits the server took per second (many writers)", "",
    "Scenario (e): every writer alone on its document, flat out, no readers. aweft-node: commits confirmed durable (in RocksDB, fsynced) per second; Hocuspocus: updates acknowledged (SyncStatus: applied in memory, saved to SQLite later) per second.", "",
    "| point | taken/s aweft | Hocuspocus | a/h | server cores aweft | Hocuspocus |", "|---|---:|---:|---:|---:|---:|");
  for (const s of intake) {
    const a = results[s.name].aweft, h = results[s.name].hocuspocus;
    const ta = a?.durable_per_s, th = h?.acked_per_s;
    const cores = (r) => r ? r.node_cpu_s / (r.seconds + 0.5) : null;
    lines.push(`| ${describe(s)} | ${num(ta)} | ${num(th)} | ${ratio(ta, th)} | ${num(cores(a), 2)} | ${num(cores(h), 2)} |`);
  }
  lines.push("");
}
if (searchResults) {
  lines.push("### Highest write rate held with p99 under 50 ms", "",
    `Scenario (a): 1 document, 1 writer, 100 ${opts.searchLight ? "light" : "full"} readers. Doubling from 100/s, then ${opts.quick ? 2 : 4} bisection steps;`,
    `a rate is held when at least 95% of it is written, readers receive at least 95% of it and p99 < 50 ms.`, "",
    "| | aweft-node | Hocuspocus | a/h |", "|---|---:|---:|---:|",
    `| highest rate held (commits/s) | ${num(searchResults.aweft.best)}${searchResults.aweft.capped ? " (cap)" : ""} | ${num(searchResults.hocuspocus.best)}${searchResults.hocuspocus.capped ? " (cap)" : ""} | ${ratio(searchResults.aweft.best, searchResults.hocuspocus.best)} |`, "");
  for (const side of sides) {
    lines.push(`${side} points tried: ` + searchResults[side].tried.map((t) =>
      `${num(t.rate)}/s ${t.ok ? "✓" : "✗"} (p99 ${num(t.p99_ms, 1)} ms, ${num(t.commits_per_s)} written/s, gen ${num(t.gen_cores, 2)} cores)`).join("; ") + ".", "");
  }
}
lines.push("Notes: a generator at about 1.00 core is the limit of its point, not the server. aweft-bench's writers keep a `durable` request in flight while edits of theirs are unconfirmed (one at a time): aweft-node's CPU includes answering them, which matters most with 1,000 writers (c); Hocuspocus' counterpart is the SyncStatus message it sends after applying each update.", "");
lines.push("What each side guarantees when it counts an edit as done: aweft-node forwards and confirms a commit only after it is in RocksDB's WAL and fsynced (durability `sync`); Hocuspocus applies an update in memory, broadcasts it and acknowledges it (SyncStatus), and saves the whole document to SQLite later, on a debounce (2 s after the last change, at most 10 s after the first unsaved one). See README.md.", "");
writeFileSync(opts.table, lines.join("\n"));
console.log(lines.join("\n"));
log(`table: ${opts.table}; raw JSON and logs: ${opts.out}`);
if (work) rmSync(work, { recursive: true, force: true });
