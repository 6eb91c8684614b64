export { chooseMode, RECONNECT_BOUND_MS, SOCKS_THRESHOLD, SshLogin, Tunnel, type TunnelMode, type TunnelOptions } from './tunnel.ts';
export { SharedLogins } from './shared-logins.ts';
export { childEnv } from './child-env.ts';
export { SshMaster, type ConnectOptions, type LoginCommand } from './master.ts';
export { checkRemotePath, checkSshOption, parseTarget, SshArgumentError, targetLabel, type SshTarget } from './ssh-args.ts';
export { sshConfig, type SshConfig, type SshSettings } from './ssh-process.ts';
export { socksConnector } from './socks-connector.ts';
