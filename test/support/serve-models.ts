import { startModelHost } from './model-host';

// Started by Playwright (webServer) for the WebLLM tests: --port N (default 4195).
const at = process.argv.indexOf('--port');
const port = Number(at >= 0 ? process.argv[at + 1] : 4195);
await startModelHost(port);
console.log(`model host on http://127.0.0.1:${port} and http://localhost:${port}`);
