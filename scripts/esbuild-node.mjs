// How the production build (./build.mjs) and the tests' klm (test/support/cli.ts) bundle code for
// Node with esbuild: our code inlined, npm packages left as imports but for
// @kubernetes/client-node. We use its KubeConfig alone (kubeconfigs and their auth), and its
// index loads every generated API class, about 50 MB of each process's memory; bundled, only what
// KubeConfig reaches is kept. Its CommonJS dependencies ask for `require`, which ES modules lack:
// the banner gives them Node's. Plain JavaScript: it runs before anything is compiled.

/** Whether an import comes from inside @kubernetes/client-node (its own dependencies are inlined with it). */
const fromClientNode = (importer) => importer.includes('/node_modules/@kubernetes/client-node/');

const externals = {
  name: 'npm-packages-external',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, ({ path, importer }) =>
      path.startsWith('@kubernetes/client-node') || (fromClientNode(importer) && !path.startsWith('node:'))
        ? undefined
        : { external: true },
    );
  },
};

/** esbuild options for an ES module run by Node 24. */
export const nodeBundle = {
  bundle: true,
  plugins: [externals],
  banner: {
    js: "import { createRequire as klmCreateRequire } from 'node:module'; const require = klmCreateRequire(import.meta.url);",
  },
  platform: 'node',
  format: 'esm',
  target: 'node24',
};
