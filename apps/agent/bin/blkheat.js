#!/usr/bin/env node
// The installed `blkheat` command: the compiled CLI.
import '../dist/cli/main.js';
