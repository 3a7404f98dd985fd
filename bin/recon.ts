#!/usr/bin/env -S node --max-semi-space-size=16
// --max-semi-space-size=16 (MiB): V8's default young generation grows to ~100 MiB more under the
// allocation rate of a bulk load (parsed rows are short-lived), which is what made the peak RSS of a
// 1,000,000-record JSON import 325 MiB; with 16 MiB semi-spaces it is ~226 MiB at the same speed.
import { main } from '../cli/program.ts';

await main(process.argv);
