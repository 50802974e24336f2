// The static checks of `npm test`: lint and format at once (each keeps one core busy, so together they take the time of the longer), then types.
import { spawn } from 'node:child_process';

function run(name) {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', name], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('close', (code) => resolve({ name, code, output }));
  });
}

// Each check's output in one piece, so that interleaved lines do not hide which check said what.
function report(results) {
  for (const { name, code, output } of results) {
    console.log(`${code === 0 ? 'passed' : 'FAILED'}: npm run ${name}`);
    if (output.trim()) console.log(output.trimEnd());
  }
  return results.every((r) => r.code === 0);
}

const styled = report(await Promise.all([run('lint'), run('format:check')]));
const typed = styled && report([await run('typecheck')]);
process.exitCode = typed ? 0 : 1;
