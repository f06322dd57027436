/** Webhook URLs that name internal addresses, spelled every way an attacker might (test/webhooks-destinations.test.ts). */

/** Every spelling of an internal address the issue names, the loopback ones on `port`. */
export function internalForms(port: number): string[] {
  return [
    'http://169.254.169.254/latest/meta-data/',
    'http://[fd00:ec2::254]/latest/meta-data/',
    'http://metadata.google.internal/computeMetadata/v1/',
    'http://metadata.google.internal./computeMetadata/v1/',
    'http://10.0.0.1:6443/',
    'http://172.16.0.1/',
    'http://192.168.1.1/',
    'http://100.64.0.1/',
    'http://[::ffff:169.254.169.254]/',
    'http://0.0.0.0/',
    'http://[::]/',
    'http://[fe80::1]/',
    'http://224.0.0.1/',
    'http://[ff02::1]/',
    'http://[fc00::1]/',
    ...loopbackForms(port),
    ...embeddingForms(port),
  ];
}

/** Every IPv6 form that embeds an internal IPv4 address: each judged by the address it carries. */
function embeddingForms(port: number): string[] {
  return [
    `http://[::127.0.0.1]:${port}/compatible`,
    `http://[::7f00:1]:${port}/compatible-hex`,
    `http://[::ffff:0:127.0.0.1]:${port}/translated`,
    `http://[::ffff:a9fe:a9fe]:${port}/mapped-metadata`,
    `http://[64:ff9b::127.0.0.1]:${port}/nat64`,
    `http://[64:ff9b::a00:1]:${port}/nat64-private`,
    `http://[64:ff9b:1::7f00:1]:${port}/nat64-local`,
    `http://[2002:7f00:1::]:${port}/6to4`,
    `http://[2002:c0a8:101::1]:${port}/6to4-private`,
    `http://[2001:0:7f00:1::ffff:ffff]:${port}/teredo-server`,
    `http://[2001:0:808:808::80ff:fffe]:${port}/teredo-client`,
  ];
}

/** Loopback, spelled every way: each reaches a receiver on `port` when allowed. */
export function loopbackForms(port: number): string[] {
  return [
    `http://127.0.0.1:${port}/dotted`,
    `http://2130706433:${port}/decimal`,
    `http://0x7f000001:${port}/hex`,
    `http://0177.0.0.1:${port}/octal`,
    `http://127.1:${port}/short`,
    `http://[::1]:${port}/ipv6`,
    `http://[::ffff:127.0.0.1]:${port}/mapped`,
    `http://localhost:${port}/localhost`,
  ];
}
