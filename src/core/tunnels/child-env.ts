/**
 * What a child we spawn (ssh above all) may see of our environment: what ssh needs to find the
 * user, their agent, Kerberos tickets, locale and terminal — nothing else. An allowlist, so a new
 * secret (SWARM_API_KEY, VLLM_API_KEY, a cloud token) never leaks into a long-lived ssh master,
 * where /proc/<pid>/environ would show it for up to ControlPersist.
 */
const KEEP = new Set([
  'HOME', 'USER', 'LOGNAME', 'PATH', 'SHELL', 'TMPDIR', 'TERM', 'COLORTERM', 'LANG', 'LANGUAGE', 'TZ',
  'SSH_AUTH_SOCK', 'SSH_ASKPASS', 'SSH_ASKPASS_REQUIRE', 'DISPLAY', 'XAUTHORITY', 'WAYLAND_DISPLAY', 'XDG_RUNTIME_DIR',
  'KRB5CCNAME', 'KRB5_CONFIG', 'KRB5_KTNAME',
  // Windows' OpenSSH and its agent pipe
  'SYSTEMROOT', 'WINDIR', 'COMSPEC', 'PATHEXT', 'USERPROFILE', 'APPDATA', 'LOCALAPPDATA', 'PROGRAMDATA', 'HOMEDRIVE', 'HOMEPATH',
]);

export function childEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const kept: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && (KEEP.has(key.toUpperCase()) || key.startsWith('LC_'))) kept[key] = value;
  }
  return kept;
}
