// The type of ./esbuild-node.mjs, for the tests that bundle klm as the build does (test/support/cli.ts).
import type { BuildOptions } from 'esbuild';

export declare const nodeBundle: BuildOptions;
