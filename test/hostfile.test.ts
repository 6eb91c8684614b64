import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Endpoint } from '../src/core/endpoints/endpoint.ts';
import {
  DEFAULT_PORT,
  formatIssue,
  HostfileError,
  hostfileFromText,
  loadHostfile,
  parseHostfile,
  writeHostfile,
} from '../src/core/hostfile/index.ts';
import { keyLikeTag } from '../src/core/hostfile/validate.ts';

const F = 'hosts.txt';

/** Parses text that must be clean and returns its endpoints. */
function ok(text: string): Endpoint[] {
  const parsed = parseHostfile(text, F);
  assert.deepEqual(parsed.errors.map(String), []);
  assert.deepEqual(parsed.warnings.map(String), []);
  return parsed.endpoints;
}

function errors(text: string): string[] {
  return parseHostfile(text, F).errors.map(String);
}

function ep(host: string, port: number, tags: Record<string, string> = {}): Endpoint {
  return { host, port, tags };
}

describe('parseHostfile: accepted forms', () => {
  it("reads Aurora-Swarm's own lines", () => {
    assert.deepEqual(ok('x4309c4s0b0n0\t6739\trole=chat\nx4309c4s0b0n1\t6740\trole=embed\n'), [
      ep('x4309c4s0b0n0', 6739, { role: 'chat' }),
      ep('x4309c4s0b0n1', 6740, { role: 'embed' }),
    ]);
  });

  it('defaults the port to 8000, also when the second column is a tag', () => {
    assert.equal(DEFAULT_PORT, 8000);
    assert.deepEqual(ok('node1\nnode2\trole=x\tgpu=1'), [
      ep('node1', 8000),
      ep('node2', 8000, { role: 'x', gpu: '1' }),
    ]);
  });

  it('skips comments and blank lines, tolerates CRLF and a BOM, and reports source lines', () => {
    const parsed = parseHostfile('\uFEFF# head\r\n\r\n  # indented comment\r\nn1\t8001\tk=v\r\n   \r\nn2\r\n', F);
    assert.deepEqual(parsed.errors, []);
    assert.deepEqual(parsed.endpoints, [ep('n1', 8001, { k: 'v' }), ep('n2', 8000)]);
    assert.deepEqual(parsed.lines, [4, 6]);
  });

  it('accepts runs of spaces and tabs as separators', () => {
    assert.deepEqual(ok('  n1   8001 \t\t role=a  \n'), [ep('n1', 8001, { role: 'a' })]);
  });

  it('accepts host:port, [ipv6]:port, [ipv6] and bare IPv6', () => {
    assert.deepEqual(ok('n1:9000\trole=a\n[::1]:8000\n[fe80::2]\t81\n::1\t8001\nfe80::1\n10.0.0.1:7\tk=v'), [
      ep('n1', 9000, { role: 'a' }),
      ep('::1', 8000),
      ep('fe80::2', 81),
      ep('::1', 8001),
      ep('fe80::1', 8000),
      ep('10.0.0.1', 7, { k: 'v' }),
    ]);
    assert.deepEqual(ok('::1'), [ep('::1', 8000)]);
  });

  it('keeps "=" inside values and accepts empty values', () => {
    assert.deepEqual(ok('n1\t8000\tq=a=b==\tempty='), [ep('n1', 8000, { q: 'a=b==', empty: '' })]);
  });

  it('accepts a trailing dot (fully qualified name) and keeps hosts as written', () => {
    assert.deepEqual(ok('Node1.Example.org.\n'), [ep('Node1.Example.org.', 8000)]);
  });

  it('keeps a "__proto__" tag as an ordinary own property', () => {
    const [first] = ok('n1\t__proto__=x');
    assert.deepEqual(Object.keys(first!.tags), ['__proto__']);
    assert.equal(Object.getPrototypeOf(first!.tags), Object.prototype);
  });
});

describe('parseHostfile: errors', () => {
  const cases: Array<[string, string]> = [
    ['host:0', 'hosts.txt:1: port "0" is not an integer from 1 to 65535'],
    ['host\t70000', 'hosts.txt:1: port "70000" is not an integer from 1 to 65535'],
    ['host:abc', 'hosts.txt:1: port "abc" is not an integer from 1 to 65535'],
    ['host:', 'hosts.txt:1: port "" is not an integer from 1 to 65535'],
    ['host:80\t81', 'hosts.txt:1: port given twice: in "host:80" and as column "81"'],
    ['host\t80a', 'hosts.txt:1: "80a" is neither a port nor a key=value tag'],
    ['host\t80\tgpu', 'hosts.txt:1: tag "gpu" is not key=value'],
    ['host\t=x', 'hosts.txt:1: tag "=x" has an empty key'],
    ['my_host', 'hosts.txt:1: host "my_host" contains "_", which is not allowed in hostnames (RFC 1123)'],
    ['-oProxyCommand=evil', 'hosts.txt:1: host "-oProxyCommand=evil" starts with "-": refused, it could be taken for a command-line option'],
    ['-x:80', 'hosts.txt:1: host "-x" starts with "-": refused, it could be taken for a command-line option'],
    ['bad-.example', 'hosts.txt:1: host "bad-.example" has a label starting or ending with "-"'],
    ['a..b', 'hosts.txt:1: host "a..b" has an empty label'],
    [`${'a'.repeat(64)}.org`, `hosts.txt:1: host "${'a'.repeat(64)}.org" has a label longer than 63 characters`],
    [`${'a.'.repeat(127)}org`, `hosts.txt:1: host "${'a.'.repeat(127)}org" is longer than 253 characters`],
    ['münchen.de', 'hosts.txt:1: host "münchen.de" contains invalid character "ü"'],
    ['10.0.0.256', 'hosts.txt:1: host "10.0.0.256" is not a valid IPv4 address'],
    ['010.0.0.1', 'hosts.txt:1: host "010.0.0.1" is not a valid IPv4 address'],
    [':80', 'hosts.txt:1: missing host'],
    ['a:b:c', 'hosts.txt:1: host "a:b:c" is not a valid IPv6 address'],
    ['[1.2.3.4]:80', 'hosts.txt:1: host "1.2.3.4" is not a valid IPv6 address'],
    ['[::1', 'hosts.txt:1: "[::1" is neither [ipv6] nor [ipv6]:port'],
    ['fe80::1%eth0', 'hosts.txt:1: host "fe80::1%eth0": IPv6 zone ids are not supported'],
  ];
  for (const [line, message] of cases) {
    it(`rejects ${JSON.stringify(line.slice(0, 40))}`, () => {
      const parsed = parseHostfile(`${line}\nok-host\n`, F);
      assert.deepEqual(parsed.errors.map(String), [message]);
      assert.deepEqual(parsed.endpoints, [ep('ok-host', 8000)], 'the good line is still read');
    });
  }

  it('collects every error of every line, with 1-based line numbers', () => {
    assert.deepEqual(errors('# c\nhost:0\tgpu\ngood\n\nmy_host\t70000\t=x\n'), [
      'hosts.txt:2: port "0" is not an integer from 1 to 65535',
      'hosts.txt:2: tag "gpu" is not key=value',
      'hosts.txt:5: host "my_host" contains "_", which is not allowed in hostnames (RFC 1123)',
      'hosts.txt:5: port "70000" is not an integer from 1 to 65535',
      'hosts.txt:5: tag "=x" has an empty key',
    ]);
  });

  it('reports an empty file, or one with only comments, as "FILE: no endpoints" (line 0)', () => {
    for (const text of ['', '\n\n', '\uFEFF# only a comment\r\n']) {
      const [issue, ...more] = parseHostfile(text, F).errors;
      assert.deepEqual(more, []);
      assert.equal(issue!.line, 0);
      assert.equal(String(issue), 'hosts.txt: no endpoints');
    }
  });

  it('does not add "no endpoints" when lines with errors already explain it', () => {
    assert.deepEqual(errors('host:0\n'), ['hosts.txt:1: port "0" is not an integer from 1 to 65535']);
  });

  it('uses "<hostfile>" when no file name is given', () => {
    assert.deepEqual(parseHostfile('host:0').errors.map(String), ['<hostfile>:1: port "0" is not an integer from 1 to 65535']);
  });
});

describe('parseHostfile: warnings', () => {
  it('keeps the first of duplicate endpoints and drops later ones with a warning', () => {
    const parsed = parseHostfile('n1\t8000\trole=a\nn2\nN1:8000\trole=b\nn1.\n[::1]:80\n0:0::1\t80\nn1\t8001\n', F);
    assert.deepEqual(parsed.errors, []);
    assert.deepEqual(parsed.warnings.map(String), [
      'hosts.txt:3: N1:8000 is a duplicate of line 1; dropped',
      'hosts.txt:4: n1.:8000 is a duplicate of line 1; dropped',
      'hosts.txt:6: [0:0::1]:80 is a duplicate of line 5; dropped',
    ]);
    assert.deepEqual(parsed.endpoints, [ep('n1', 8000, { role: 'a' }), ep('n2', 8000), ep('::1', 80), ep('n1', 8001)]);
    assert.deepEqual(parsed.lines, [1, 2, 5, 7]);
  });

  it('warns about a tag key given twice on one line; the last value wins', () => {
    const parsed = parseHostfile('n1\trole=a\trole=b', F);
    assert.deepEqual(parsed.warnings.map(String), ['hosts.txt:1: tag "role" given twice; the last value wins']);
    assert.deepEqual(parsed.endpoints, [ep('n1', 8000, { role: 'b' })]);
  });
});

describe('hostfileFromText and loadHostfile', () => {
  it('returns endpoints and warnings, or throws HostfileError listing every error', () => {
    assert.deepEqual(hostfileFromText('n1\nn1').endpoints, [ep('n1', 8000)]);
    assert.equal(hostfileFromText('n1\nn1').warnings.length, 1);
    assert.throws(
      () => hostfileFromText('host:0\nmy_host', 'h'),
      (err: unknown) => {
        assert.ok(err instanceof HostfileError);
        assert.equal(err.name, 'HostfileError');
        assert.equal(err.issues.length, 2);
        assert.equal(
          err.message,
          'h:1: port "0" is not an integer from 1 to 65535\nh:2: host "my_host" contains "_", which is not allowed in hostnames (RFC 1123)',
        );
        return true;
      },
    );
  });

  it('reads a real file and names the path in issues', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hostfile-test-'));
    try {
      const good = join(dir, 'good.hosts');
      await writeFile(good, 'x4309c4s0b0n0\t6739\trole=chat\nx4309c4s0b0n0\t6739\n');
      const loaded = await loadHostfile(good);
      assert.deepEqual(loaded.endpoints, [ep('x4309c4s0b0n0', 6739, { role: 'chat' })]);
      assert.deepEqual(loaded.warnings.map(String), [`${good}:2: x4309c4s0b0n0:6739 is a duplicate of line 1; dropped`]);

      const bad = join(dir, 'bad.hosts');
      await writeFile(bad, 'n1\n\nn2:99999\n');
      await assert.rejects(loadHostfile(bad), (err: unknown) => {
        assert.ok(err instanceof HostfileError);
        assert.equal(err.message, `${bad}:3: port "99999" is not an integer from 1 to 65535`);
        return true;
      });

      const binary = join(dir, 'binary.hosts');
      await writeFile(binary, Buffer.from('n1\nn2\t80\n\xff\xfe\x00junk\n', 'latin1'));
      await assert.rejects(loadHostfile(binary), (err: unknown) => {
        assert.ok(err instanceof HostfileError);
        assert.equal(err.message, `${binary}:3: holds a NUL byte (a binary file?); a hostfile must be UTF-8 text`);
        return true;
      });

      const missing = join(dir, 'missing.hosts');
      await assert.rejects(loadHostfile(missing), (err: unknown) => {
        assert.ok(err instanceof Error && !(err instanceof HostfileError));
        assert.ok(err.message.startsWith(`cannot read hostfile ${missing}: `), err.message);
        assert.match(err.message, /ENOENT/);
        return true;
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('error lists stay short', () => {
  it('lists the first 20 errors then "… and N more", at most 5 per line, and cuts quoted junk short', () => {
    const text = `${'x '.repeat(10_000)}\n${Array.from({ length: 50 }, (_, i) => `h${i}\t0`).join('\n')}\n${'y'.repeat(5_000)}:1\n`;
    assert.throws(
      () => hostfileFromText(text, 'h'),
      (err: unknown) => {
        assert.ok(err instanceof HostfileError);
        assert.equal(err.issues.length, 6 + 50 + 1, 'every problem is kept for callers that want them all');
        const lines = err.message.split('\n');
        assert.equal(lines.length, 21);
        assert.equal(lines[5], 'h:1: … and 9,994 more problems on this line');
        assert.equal(lines[20], '… and 37 more');
        return true;
      },
    );
    const long = parseHostfile(`${'y'.repeat(5_000)}\t80\n`, 'h').errors[0]!.message;
    assert.ok(long.length < 400 && long.includes('(5,000 characters)'), long);
  });
});

describe('writeHostfile', () => {
  it('writes host<TAB>port<TAB>tags sorted by key, IPv6 bare, with a trailing newline', () => {
    const text = writeHostfile([ep('n1', 6739, { role: 'chat', gpu: '0' }), ep('::1', 8000), ep('10.0.0.1', 1, { a: 'x=y' })]);
    assert.equal(text, 'n1\t6739\tgpu=0\trole=chat\n::1\t8000\n10.0.0.1\t1\ta=x=y\n');
    assert.equal(writeHostfile([]), '');
  });

  it('refuses endpoints that would not read back as themselves', () => {
    assert.throws(
      () => writeHostfile([ep('ok', 80), ep('-bad', 0, { 'a b': 'c', '': 'x', k: 'v w' })]),
      (err: unknown) => {
        assert.ok(err instanceof HostfileError);
        assert.deepEqual(err.issues.map(formatIssue), [
          '<writeHostfile>:2: host "-bad" starts with "-": refused, it could be taken for a command-line option',
          '<writeHostfile>:2: port "0" is not an integer from 1 to 65535',
          '<writeHostfile>:2: tag "=x" has an empty key',
          '<writeHostfile>:2: tag key "a b" contains whitespace or "="',
          '<writeHostfile>:2: tag value "v w" contains whitespace',
        ]);
        return true;
      },
    );
  });
});

// --- properties ---

/** Same identity as the parser's duplicate check, to generate lists without duplicates. */
function identity(e: Endpoint): string {
  const host = e.host.includes(':') ? new URL(`http://[${e.host}]/`).hostname : e.host.replace(/\.$/, '');
  return `${host.toLowerCase()} ${e.port}`;
}

const hostnameArb = fc
  .tuple(fc.domain(), fc.array(fc.boolean(), { minLength: 64, maxLength: 64 }), fc.boolean())
  .map(([name, upper, dot]) => [...name].map((c, i) => (upper[i % 64] ? c.toUpperCase() : c)).join('') + (dot ? '.' : ''));
const hostArb = fc.oneof(hostnameArb, fc.ipV4(), fc.ipV6());
const noSpace = (s: string) => !/\s/.test(s);
// `key` and the names keys go by (`token`, `api_key`) are no tags: a line names where its key is kept.
const tagKeyArb = fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }).filter((s) => noSpace(s) && !s.includes('=') && s !== 'key' && !keyLikeTag(s));
const tagValueArb = fc.string({ unit: 'binary', maxLength: 8 }).filter(noSpace);
const endpointArb: fc.Arbitrary<Endpoint> = fc.record({
  host: hostArb,
  port: fc.integer({ min: 1, max: 65535 }),
  tags: fc.dictionary(tagKeyArb, tagValueArb, { maxKeys: 4, noNullPrototype: true }),
}, { noNullPrototype: true });

const junkChar = fc.constantFrom(' ', '\t', '\r', ':', '[', ']', '=', '#', '-', '_', '.', '%', 'a', 'Z', '0', '8', 'é', '\uFEFF', '\u00a0', '\u2028', '\0');
const junkLineArb = fc.oneof(
  fc.string({ unit: junkChar, maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.tuple(fc.oneof(hostArb, fc.string({ unit: junkChar, maxLength: 8 })), fc.string({ unit: junkChar, maxLength: 12 })).map(([h, t]) => h + t),
);
const junkTextArb = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.array(junkLineArb, { maxLength: 12 }).chain((lines) => fc.constantFrom('\n', '\r\n').map((eol) => lines.join(eol))),
);

describe('hostfile properties', () => {
  it('parseHostfile(writeHostfile(x)) gives x back, with no issues', () => {
    fc.assert(
      fc.property(fc.uniqueArray(endpointArb, { minLength: 1, maxLength: 8, selector: identity }), (endpoints) => {
        const parsed = parseHostfile(writeHostfile(endpoints), F);
        assert.deepEqual(parsed.errors, []);
        assert.deepEqual(parsed.warnings, []);
        assert.deepEqual(parsed.endpoints, endpoints);
        assert.deepEqual(parsed.lines, endpoints.map((_, i) => i + 1));
      }),
      { numRuns: 300 },
    );
  });

  it('never throws on junk; every issue names a real line (0 only for "no endpoints")', () => {
    fc.assert(
      fc.property(junkTextArb, (text) => {
        const lineCount = text.split('\n').length;
        const parsed = parseHostfile(text, F);
        assert.equal(parsed.lines.length, parsed.endpoints.length);
        for (const line of parsed.lines) assert.ok(line >= 1 && line <= lineCount);
        for (const issue of [...parsed.errors, ...parsed.warnings]) {
          assert.equal(issue.file, F);
          if (issue.line === 0) {
            assert.equal(String(issue), 'hosts.txt: no endpoints');
            assert.deepEqual(parsed.errors, [issue]);
          } else {
            assert.ok(Number.isInteger(issue.line) && issue.line >= 1 && issue.line <= lineCount, String(issue));
            assert.ok(String(issue).startsWith(`hosts.txt:${issue.line}: `));
            assert.ok(!/[\n\r]/.test(issue.message), 'one issue, one line');
          }
        }
        // Whatever the parser accepts, the writer can write and the parser reads back the same.
        assert.deepEqual(parseHostfile(writeHostfile(parsed.endpoints), F).endpoints, parsed.endpoints);
      }),
      { numRuns: 1000 },
    );
  });
});
