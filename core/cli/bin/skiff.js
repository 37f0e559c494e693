#!/usr/bin/env node
// A committed entry point, so npm can link the `skiff` command at install time, before the build exists.
import '../dist/bin.js';
