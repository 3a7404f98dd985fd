#!/usr/bin/env -S node --max-semi-space-size=16
// --max-semi-space-size=16 (MiB): V8's default young generation grows to ~100 MiB more under the
// allocation rate of a bulk load (parsed rows are short-lived), which is what made the peak RSS of a
// 1,000,000-record JSON import 325 MiB; with 16 MiB semi-spaces it is ~226 MiB at the same speed.
//
// JavaScript, not TypeScript: Node strips the types of a .ts entry point before the compile cache
// below can be enabled, and so loads its type stripper (a WebAssembly module) at every start, about
// 0.1 s of CPU that a 1,000-line import spent before its first statement (docs/benchmark-record.md
// §3). Every module it loads is TypeScript, from the cache.
import { enableCompileCache } from 'node:module';

// Node strips the types of every module at each start: about 0.25 s of CPU before a command does
// anything (a fifth of a 100,000-line import's own CPU, docs/benchmark-record.md §3). The compile
// cache keeps the stripped and compiled modules, keyed by their source, in the checkout's own
// .cache (writable only by whoever can change the code; where it is not writable, Node goes on
// without it). It must be enabled before the command's modules load: hence the dynamic import.
enableCompileCache(new URL('../.cache/node-compile-cache', import.meta.url).pathname);
const { main } = await import('../cli/program.ts');

await main(process.argv);
