// klm: the command line. The program, its commands and exit codes: ./program.ts.
import { run } from './program';

void run(process.argv.slice(2)).then((code) => process.exit(code));
