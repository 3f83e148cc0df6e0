/**
 * The Dockerfile without a Docker engine: its stages, user and working directory, that the final
 * image holds every entry point, that the frozen install sees every workspace manifest, what
 * .dockerignore lets through, and that the shipped code's imports are production dependencies.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { renderKustomization } from '../support/kustomize';
import { Rendered } from './k8s-objects';
import { REPO_ROOT as ROOT } from './promql-names';
import { NAMES, portVariable, TEST_TOKEN, loadFor, numberOf, read, isFile, isExactImage } from './deployment';

// ------------------------------------------------------------------------------- Dockerfile

interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

function dockerfileInstructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (pending === '' && (line.trim() === '' || line.trim().startsWith('#'))) continue;
    if (pending !== '' && line.trim().startsWith('#')) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const full = (pending + line).trim();
    pending = '';
    const m = /^([A-Za-z]+)\s+(.*)$/s.exec(full);
    if (!m) throw new Error(`Dockerfile: cannot read ${full}`);
    out.push({ keyword: (m[1] as string).toUpperCase(), args: (m[2] as string).trim() });
  }
  return out;
}

interface Stage {
  readonly from: string;
  readonly name: string | undefined;
  readonly instructions: Instruction[];
  workdir: string | undefined;
  user: string | undefined;
}

function dockerStages(instructions: Instruction[]): Stage[] {
  const stages: Stage[] = [];
  for (const ins of instructions) {
    if (ins.keyword === 'FROM') {
      const m = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args);
      if (!m) throw new Error(`Dockerfile: cannot read FROM ${ins.args}`);
      const parent = stages.find((s) => s.name === m[1]);
      stages.push({ from: m[1] as string, name: m[2], instructions: [], workdir: parent?.workdir, user: parent?.user });
      continue;
    }
    const stage = stages[stages.length - 1];
    if (!stage) {
      if (ins.keyword === 'ARG') continue;
      throw new Error(`Dockerfile: ${ins.keyword} before the first FROM`);
    }
    stage.instructions.push(ins);
    if (ins.keyword === 'WORKDIR') stage.workdir = ins.args.startsWith('/') ? ins.args : path.posix.join(stage.workdir ?? '/', ins.args);
    if (ins.keyword === 'USER') stage.user = ins.args;
  }
  return stages;
}

/**
 * Whether .dockerignore keeps a path out of the build context: patterns in order, the last one
 * matching the path or one of its parent directories wins, `!` re-includes (Docker's rules).
 */
function dockerIgnored(text: string): (file: string) => boolean {
  const rules = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const negate = l.startsWith('!');
      const pattern = path.posix.normalize((negate ? l.slice(1) : l).replace(/^\/+/, ''));
      const re = new RegExp(
        `^${pattern.replace(/[.+^${}()|\\]/g, '\\$&').replace(/\*\*\/|\*\*|\*|\?/g, (w) => ({ '**/': '(?:.*/)?', '**': '.*', '*': '[^/]*', '?': '[^/]' })[w] as string)}$`,
      );
      return { negate, re };
    });
  return (file) => {
    const parts = file.split('/');
    const candidates = parts.map((_p, i) => parts.slice(0, i + 1).join('/'));
    let excluded = false;
    for (const rule of rules) if (candidates.some((c) => rule.re.test(c))) excluded = !rule.negate;
    return excluded;
  };
}

/** The non-test TypeScript files under a directory. */
function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

/** Module specifiers a file loads at run time (type-only imports and exports are erased). */
function runtimeImports(source: string): string[] {
  const specs: string[] = [];
  for (const m of source.matchAll(/^\s*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gm))
    if (!m[2]) specs.push(m[3] as string);
  for (const m of source.matchAll(/\b(?:require|import)\(\s*['"]([^'"]+)['"]\s*\)/g)) specs.push(m[1] as string);
  return specs;
}

describe('Dockerfile', () => {
  const stages = dockerStages(dockerfileInstructions(read('Dockerfile')));
  const final = stages[stages.length - 1] as Stage;

  it('builds in stages and runs the final one from /app as a non-root user', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(final.workdir).toBe('/app');
    expect(final.user).toBeDefined();
    const user = (final.user as string).split(':')[0] as string;
    expect(['root', '0', '']).not.toContain(user);
    // Numeric, so that runAsNonRoot can verify it, and the uid the manifests run the pods as.
    expect(user).toMatch(/^\d+$/);
    const k8s = new Rendered(renderKustomization(path.join(ROOT, 'k8s/base')));
    for (const name of NAMES) expect(k8s.deployment(name).spec.template.spec.securityContext?.runAsUser ?? Number(user)).toBe(Number(user));
  });

  it('builds and runs on Node 22 LTS by an exact tag, with pnpm pinned exactly, while engines still admits Node 20.19', () => {
    const instructions = dockerfileInstructions(read('Dockerfile'));
    const args = new Map(
      instructions.filter((i) => i.keyword === 'ARG' && i.args.includes('=')).map((i) => i.args.split('=', 2) as [string, string]),
    );
    const resolve = (text: string) =>
      text.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a?: string, b?: string) => args.get((a ?? b) as string) ?? '');
    const stageNames = new Set(stages.map((st) => st.name));
    const images = stages.map((st) => resolve(st.from)).filter((from) => !stageNames.has(from));
    expect(images.length).toBeGreaterThan(0);
    for (const image of images) {
      expect({ image, exact: isExactImage(image) }).toEqual({ image, exact: true });
      expect(image).toMatch(/^node:22\.\d+\.\d+-/);
    }
    expect(args.get('PNPM_VERSION')).toMatch(/^\d+\.\d+\.\d+$/);
    const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    expect(engines).toBe('>=20.19');
  });

  it('runs Node with the young-generation size that the local run and the benches use too', () => {
    const env = final.instructions
      .filter((i) => i.keyword === 'ENV')
      .map((i) => i.args)
      .join(' ');
    const flag = /NODE_OPTIONS=(--max-semi-space-size=\d+)/.exec(env)?.[1];
    expect(flag).toBe('--max-semi-space-size=32');
    // The harness starts the services for the tests, the benches and the quick start alike.
    expect(read('packages/testkit/src/services.ts')).toContain(`SERVICE_NODE_FLAGS = ['${flag}']`);
  });

  it('starts a real process by default', () => {
    const commands = final.instructions.filter((i) => i.keyword === 'CMD' || i.keyword === 'ENTRYPOINT');
    expect(commands.length).toBeGreaterThan(0);
    const argv = commands.flatMap((c) => JSON.parse(c.args) as string[]);
    const entry = argv.find((a) => /^services\/[^/]+\/dist\/index\.js$/.test(a));
    expect(entry).toBeDefined();
    const name = (entry as string).split('/')[1] as string;
    expect(NAMES).toContain(name);
    expect(argv[0]).toBe('node');
  });

  it('puts the compiled entry point of every process into the final image', () => {
    const copies = final.instructions.filter((i) => i.keyword === 'COPY').map((i) => i.args);
    const built = stages.slice(0, -1).flatMap((s) => s.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args));
    for (const name of NAMES) {
      // tsc compiles services/<name>/src to services/<name>/dist, so src/index.ts becomes dist/index.js.
      const tsconfig = JSON.parse(read(`services/${name}/tsconfig.json`)) as { compilerOptions: { rootDir: string; outDir: string } };
      expect(tsconfig.compilerOptions).toMatchObject({ rootDir: 'src', outDir: 'dist' });
      expect(built.some((run) => /\btsc\b/.test(run) && new RegExp(`services/${name}(\\s|/|$)`).test(run))).toBe(true);
      expect(copies.some((c) => new RegExp(`services/${name}/dist\\s+(/app/)?services/${name}/dist/?$`).test(c))).toBe(true);
    }
    for (const pkg of ['config', 'runtime', 'stores']) expect(copies.some((c) => c.endsWith(`packages/${pkg}/dist`))).toBe(true);
  });

  it('copies the manifest of every workspace package the lockfile knows, so --frozen-lockfile installs', () => {
    const lock = parse(read('pnpm-lock.yaml')) as { importers: Record<string, unknown> };
    const manifests = stages
      .flatMap((s) => s.instructions)
      .filter((i) => i.keyword === 'COPY' && !i.args.startsWith('--from'))
      .flatMap((i) => {
        const parts = i.args.split(/\s+/).filter((a) => !a.startsWith('--'));
        return parts.slice(0, -1).filter((src) => src === 'package.json' || src.endsWith('/package.json'));
      })
      .map((src) => (src === 'package.json' ? '.' : path.posix.dirname(src)));
    expect(manifests.sort()).toEqual(Object.keys(lock.importers).sort());
  });

  it('ships no dependency of the dev tooling: the bench and the harness declare theirs as devDependencies', () => {
    // The prod-deps stage installs the production dependencies of every workspace package whose
    // manifest it copies, so a charting library listed under the bench's "dependencies" would ship.
    const lock = parse(read('pnpm-lock.yaml')) as { importers: Record<string, { dependencies?: Record<string, unknown> }> };
    for (const tool of ['bench', 'packages/testkit']) {
      expect({ tool, dependencies: Object.keys(lock.importers[tool]?.dependencies ?? {}) }).toEqual({ tool, dependencies: [] });
    }
  });

  it('sends what it copies from the build context through .dockerignore', () => {
    const ignored = dockerIgnored(read('.dockerignore'));
    const sources = stages.flatMap((s) => s.instructions).filter((i) => i.keyword === 'COPY' && !/--from=/.test(i.args));
    const files: string[] = [];
    for (const ins of sources) {
      for (const src of ins.args
        .split(/\s+/)
        .filter((a) => !a.startsWith('--'))
        .slice(0, -1)) {
        const abs = path.join(ROOT, src);
        expect({ source: src, exists: existsSync(abs) }).toEqual({ source: src, exists: true });
        if (isFile(abs)) files.push(src);
        // what tsc -b needs of a copied directory
        else for (const inner of ['tsconfig.json', 'src/index.ts']) if (isFile(path.join(abs, inner))) files.push(`${src}/${inner}`);
      }
    }
    for (const name of NAMES) files.push(`services/${name}/tsconfig.json`, `services/${name}/src/index.ts`, `services/${name}/src/env.ts`);
    expect(files.length).toBeGreaterThan(NAMES.length);
    expect(files.filter(ignored)).toEqual([]);
    // and the host's build output or dependencies never are
    for (const p of ['node_modules/x/index.js', 'services/ingest/dist/index.js', 'services/ingest/node_modules/x'])
      expect(ignored(p)).toBe(true);
  });

  it('declares every package the shipped code imports as a production dependency (the image has no devDependencies)', () => {
    const missing: string[] = [];
    for (const dir of [...NAMES.map((n) => `services/${n}`), 'packages/config', 'packages/runtime', 'packages/stores']) {
      const manifest = JSON.parse(read(`${dir}/package.json`)) as { dependencies?: Record<string, string> };
      const deps = new Set(Object.keys(manifest.dependencies ?? {}));
      for (const file of sourceFiles(path.join(ROOT, dir, 'src'))) {
        for (const spec of runtimeImports(readFileSync(file, 'utf8'))) {
          if (spec.startsWith('.') || spec.startsWith('node:')) continue;
          const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : (spec.split('/')[0] as string);
          if (!deps.has(pkg)) missing.push(`${path.relative(ROOT, file)} imports ${spec}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('exposes the port every process listens on by default', () => {
    const exposed = final.instructions
      .filter((i) => i.keyword === 'EXPOSE')
      .flatMap((i) => i.args.split(/\s+/).map((p) => Number(p.replace(/\/(tcp|udp)$/, ''))));
    for (const name of NAMES) {
      const defaults = loadFor(name, name === 'admin' ? { ADMIN_TOKEN: TEST_TOKEN } : {});
      expect(exposed).toContain(numberOf(defaults, portVariable(name)));
    }
  });
});
