#!/usr/bin/env node
import { main } from '../cli/program.ts';

await main(process.argv);
