// Part of `npm run build`: fails when an emitted chunk imports a module worker's entry chunk (see worker-chunks.mjs).
import { findEntryImports } from './worker-chunks.mjs';

const dist = process.argv[2] ?? 'dist';
const { entries, offences } = await findEntryImports(dist);
if (entries.length === 0) {
  console.error(`No module worker entry found in ${dist}: the check cannot tell whether chunks import one.`);
  process.exitCode = 1;
} else if (offences.length > 0) {
  for (const o of offences) console.error(`${o.chunk} imports the worker entry ${o.imports}: WebKit would evaluate that worker twice.`);
  process.exitCode = 1;
} else {
  console.log(`Worker entries imported by no chunk: ${entries.join(', ')}`);
}
