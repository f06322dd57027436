import { execFile } from 'node:child_process';
import { mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Runs a program; a failure carries the end of what it printed. */
export async function command(file: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<string> {
  try {
    return (await run(file, args, { ...options, maxBuffer: 64 * 1024 * 1024 })).stdout;
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    const tail = (stderr ?? '').trim().split('\n').slice(-3).join(' ');
    // apt's -o settings left out: the command as a person would type it.
    const shown = args.filter((arg, i) => arg !== '-o' && args[i - 1] !== '-o' && arg !== '-qq');
    throw new Error(`${file} ${shown.join(' ')} failed: ${tail || message}`);
  }
}

/** Whether a program is on PATH (through the shell, as a user would look). */
export async function onPath(name: string): Promise<string | null> {
  return run('sh', ['-c', `command -v ${name}`]).then(
    ({ stdout }) => stdout.trim() || null,
    () => null,
  );
}

/**
 * Downloads Debian packages (the .deb files, nothing installed) into `dir` with apt-get, as any
 * user: first from the package lists apt already has; without usable ones (a fresh machine, lists
 * never fetched), apt's state and cache are pointed into `dir` and the lists fetched there from the
 * machine's own sources, signatures checked as apt always does. Returns the .deb files.
 */
export async function downloadPackages(packages: string[], dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  try {
    await command('apt-get', ['download', ...packages], { cwd: dir });
  } catch {
    const own = path.join(dir, '.apt');
    for (const sub of ['lists/partial', 'cache/archives/partial']) {
      await mkdir(path.join(own, sub), { recursive: true });
    }
    const settings = [
      `Dir::State=${own}`,
      `Dir::State::Lists=${own}/lists`,
      'Dir::State::status=/var/lib/dpkg/status',
      `Dir::Cache=${own}/cache`,
      'Debug::NoLocking=1',
    ];
    const options = [...settings.flatMap((setting) => ['-o', setting]), '-qq'];
    // Some sources may be out of reach; the download says whether the ones needed answered.
    const update = await command('apt-get', [...options, 'update'], { cwd: dir }).then(
      () => null,
      (error: Error) => error.message,
    );
    try {
      await command('apt-get', [...options, 'download', ...packages], { cwd: dir });
    } catch (error) {
      throw new Error(`${(error as Error).message}${update ? ` (after ${update})` : ''}`);
    }
  }
  return (await readdir(dir)).filter((name) => name.endsWith('.deb')).map((name) => path.join(dir, name));
}

/** A .deb's control field (Package, Version, Depends). */
export async function debField(deb: string, field: string): Promise<string> {
  return (await command('dpkg-deb', ['-f', deb, field])).trim();
}

/** The names a Depends field lists (the first of each alternative, without versions). */
export function dependencyNames(depends: string): string[] {
  return depends
    .split(',')
    .map(
      (group) =>
        group
          .split('|')[0]!
          .trim()
          .split(/[\s(:]/)[0]!,
    )
    .filter(Boolean);
}

/** Whether dpkg has `name` installed on this machine. */
export async function installed(name: string): Promise<boolean> {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own format syntax, not a template.
  return command('dpkg-query', ['-W', '-f', '${db:Status-Status}', name]).then(
    (status) => status === 'installed',
    () => false,
  );
}

/** The environment for a program whose libraries are (also) in `libraryPath`. */
export function withLibraries(libraryPath: string[]): NodeJS.ProcessEnv {
  return libraryPath.length ? { ...process.env, LD_LIBRARY_PATH: libraryPath.join(':') } : process.env;
}

/** The shared libraries `binary` needs that the dynamic linker does not find (ldd's "not found"). */
export async function missingLibraries(binary: string, libraryPath: string[]): Promise<string[]> {
  const output = await command('ldd', [binary], { env: withLibraries(libraryPath) });
  return output
    .split('\n')
    .filter((line) => line.includes('=> not found'))
    .map((line) => line.trim().split(/\s/)[0]!);
}

/** The folders under `root` that hold shared libraries, for LD_LIBRARY_PATH. */
export async function libraryFolders(root: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    if (entries.some((entry) => !entry.isDirectory() && /\.so(\.|$)/.test(entry.name))) found.push(dir);
    for (const entry of entries) if (entry.isDirectory()) await walk(path.join(dir, entry.name));
  };
  for (const top of ['lib', 'usr/lib']) await walk(path.join(root, top));
  return found;
}
