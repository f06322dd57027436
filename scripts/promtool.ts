// `npx tsx scripts/promtool.ts ARGS…`: Prometheus' promtool (tooling/promtool.ts fetches it into
// .cache/ when missing), e.g. `check rules deploy/prometheus/alerts.yaml`; exits with its code.
import { promtool } from '../tooling/promtool.js';

const { code, stdout, stderr } = await promtool(process.argv.slice(2));
process.stdout.write(stdout);
process.stderr.write(stderr);
process.exit(code);
