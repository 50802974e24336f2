/**
 * Runs the test server from the command line, for the end-to-end tests and by hand:
 *
 *   npx tsx test/support/serve-openai.ts --port 4190 --allowed-origin http://127.0.0.1:4173 --refusing-port 4191
 *
 * --refusing-port starts a second server that sends no CORS headers, which a
 * browser page on another origin cannot read.
 */
import { parseArgs } from 'node:util';
import { startOpenAIServer } from './openai-server';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '4190' },
    'allowed-origin': { type: 'string', default: '*' },
    'refusing-port': { type: 'string' },
    'token-delay': { type: 'string', default: '0' },
    'max-model-len': { type: 'string', default: '32768' },
    'api-key': { type: 'string' },
  },
});

const common = {
  tokenDelayMs: Number(values['token-delay']),
  maxModelLen: Number(values['max-model-len']),
  ...(values['api-key'] && { apiKey: values['api-key'] }),
};
const servers = [await startOpenAIServer({ ...common, port: Number(values.port), allowedOrigin: values['allowed-origin'] })];
if (values['refusing-port']) servers.push(await startOpenAIServer({ ...common, port: Number(values['refusing-port']), allowedOrigin: null }));
for (const s of servers) process.stdout.write(`OpenAI-compatible test server at ${s.url} (CORS: ${s.allowedOrigin ?? 'none'})\n`);

const stop = () => void Promise.all(servers.map((s) => s.stop())).then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
