import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { endpointId, originOf } from '../src/core/endpoints/endpoint.ts';
import { parseHostfile, writeHostfile } from '../src/core/hostfile/index.ts';

const F = 'swarm.hosts';

function parsed(text: string) {
  const r = parseHostfile(text, F);
  return { endpoints: r.endpoints, errors: r.errors.map(String), warnings: r.warnings.map(String) };
}

describe('hostfile: base-URL lines (any OpenAI-compatible service)', () => {
  it('reads a base URL with model= and a key by reference, normalised, beside plain lines', () => {
    const r = parsed('https://Inference.Example.org:443/resource_server/sophia/vllm/v1/\tmodel=meta/Llama-3\tkey=env:ALCF_TOKEN\nx4309c4s0b0n0\t6739\trole=chat\n[::1]:8000 key=secret:local-vllm\n');
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.endpoints, [
      { host: 'inference.example.org', port: 443, tags: { model: 'meta/Llama-3' }, url: 'https://inference.example.org/resource_server/sophia/vllm/v1', key: { from: 'env', name: 'ALCF_TOKEN' } },
      { host: 'x4309c4s0b0n0', port: 6739, tags: { role: 'chat' } },
      { host: '::1', port: 8000, tags: {}, key: { from: 'secret', name: 'local-vllm' } },
    ]);
    assert.equal(endpointId(r.endpoints[0]!), 'https://inference.example.org/resource_server/sophia/vllm/v1');
    assert.equal(originOf(r.endpoints[0]!), 'https://inference.example.org');
    assert.equal(endpointId(r.endpoints[1]!), 'x4309c4s0b0n0:6739');
  });

  it('keeps a base URL’s port and IPv6 host; a repeated URL is a duplicate', () => {
    const r = parsed('http://[::1]:8080/v1\nhttps://h.example:8443/a/v1\nhttps://H.example:8443/a/v1/\n');
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.endpoints.map((e) => [e.host, e.port, e.url]), [['::1', 8080, 'http://[::1]:8080/v1'], ['h.example', 8443, 'https://h.example:8443/a/v1']]);
    assert.deepEqual(r.warnings, [`${F}:3: https://h.example:8443/a/v1 is a duplicate of line 2; dropped`]);
  });

  it('refuses a literal key, naming the file and line and never quoting the key', () => {
    const text = 'https://svc.example/v1 key=sk-SECRET1\nnode1 8000 api_key=sk-SECRET2\nhttps://user:sk-SECRET3@svc.example/v1\nhttps://svc.example/v1?api-key=sk-SECRET4\nnode2 Token=sk-SECRET5\n';
    const r = parsed(text);
    assert.equal(r.endpoints.length, 0);
    assert.equal(r.errors.length, 5);
    assert.match(r.errors[0]!, /^swarm\.hosts:1: key=…: a hostfile never holds a key itself .*key=env:NAME .*key=secret:NAME/);
    assert.match(r.errors[1]!, /^swarm\.hosts:2: tag "api_key" would hold a key/);
    assert.match(r.errors[2]!, /^swarm\.hosts:3: "https:\/\/…@svc\.example\/v1" holds credentials: refused/);
    assert.match(r.errors[3]!, /^swarm\.hosts:4: "https:\/\/svc\.example\/v1\?…": a base URL takes no query or fragment/);
    assert.match(r.errors[4]!, /^swarm\.hosts:5: tag "Token" would hold a key/);
    assert.ok(!r.errors.join('\n').includes('SECRET'), r.errors.join('\n'));
  });

  it('says what is wrong with other bad base-URL lines', () => {
    const r = parsed('ftp://svc.example/v1\nhttps://svc.example/v1 443\nhttps://bad_host/v1\nhttps://svc.example/v1 key=env:1BAD\nhttps://svc.example/v1 key=vault:x\n');
    assert.deepEqual(r.errors, [
      `${F}:1: "ftp://svc.example/v1": a base URL must be https:// (or http://)`,
      `${F}:2: a base URL carries its own port (https://host:443/…), not a port column`,
      `${F}:3: host "bad_host" contains "_", which is not allowed in hostnames (RFC 1123)`,
      `${F}:4: key=env:"1BAD": not a valid environment variable name`,
      `${F}:5: key=…: a hostfile never holds a key itself (it would end up in backups, logs and version control): give key=env:NAME (an environment variable) or key=secret:NAME (VS Code's secret storage)`,
    ]);
  });

  it('warns when a key would travel over plain http to another machine', () => {
    const r = parsed('http://svc.example/v1 key=env:K\nhttp://127.0.0.1:9000/v1 key=env:K\n');
    assert.deepEqual(r.warnings, [`${F}:1: http://svc.example/v1 is plain http: its key would cross the network unencrypted; use https`]);
  });

  it('writes base-URL lines and key references back as they read', () => {
    const { endpoints } = parsed('https://svc.example:8443/p/v1 model=m role=chat key=env:SVC_KEY\nnode1 6739 key=secret:vllm\n');
    const text = writeHostfile(endpoints);
    assert.equal(text, 'https://svc.example:8443/p/v1\tmodel=m\trole=chat\tkey=env:SVC_KEY\nnode1\t6739\tkey=secret:vllm\n');
    assert.deepEqual(parsed(text).endpoints, endpoints);
    assert.throws(() => writeHostfile([{ host: 'n', port: 1, tags: { key: 'sk-x' } }]), /a tag named "key" would read back as a key reference/);
  });
});
