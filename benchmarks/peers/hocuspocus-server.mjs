// A Hocuspocus server with its SQLite persistence extension, as the peer that
// benchmarks/peers/run.sh measures beside aweft-node.
//
//   node hocuspocus-server.mjs --port 7800 --db /tmp/x/hocuspocus.sqlite [--host 127.0.0.1]
//
// Prints "hocuspocus pid PID listening ws://HOST:PORT/ db FILE" once it accepts
// connections. Everything else is Hocuspocus' defaults (debounce 2000 ms,
// maxDebounce 10000 ms: see README.md), so what is measured is Hocuspocus as
// it ships, with the persistence its documentation recommends for one machine.

import { Server } from "@hocuspocus/server";
import { SQLite } from "@hocuspocus/extension-sqlite";

function parse(argv) {
  const args = { host: "127.0.0.1", port: 7800, db: "" };
  for (let i = 0; i < argv.length; ++i) {
    const flag = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${flag} needs a value`);
      return argv[++i];
    };
    if (flag === "--host") args.host = next();
    else if (flag === "--port") args.port = Number(next());
    else if (flag === "--db") args.db = next();
    else throw new Error(`unknown flag ${flag}`);
  }
  if (!args.db) throw new Error("--db FILE is needed (a file, so that saves really reach a disk)");
  return args;
}

const args = parse(process.argv.slice(2));
const server = new Server({
  name: "aweft-peers",
  address: args.host,
  port: args.port,
  quiet: true,
  extensions: [new SQLite({ database: args.db })],
});
await server.listen();
console.log(`hocuspocus pid ${process.pid} listening ws://${args.host}:${args.port}/ db ${args.db}`);
