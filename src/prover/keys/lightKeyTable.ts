/**
 * The table of Light Protocol's proving keys Refract uses (pinned by sha256, light-keys §11), how a
 * key is named in the proving pool and the proof queue (`light/<name>`), and where its resident file
 * lives. Plain data and path functions: prover threads import it (no module with top-level await in
 * its graph, unlike lightKeys.ts, whose witness code needs Poseidon).
 */
import path from 'node:path';
import { getCircuit } from './circuits.ts';

/** The npm packages that ship Light's keys, with the registry integrity (spec §11). */
export const LIGHT_CLI_PACKAGES = Object.freeze({
  '0.27.0': {
    spec: '@lightprotocol/zk-compression-cli@0.27.0',
    integrity: 'sha512-aeNG8tWSnvHrlf9SmmUrX+ofl9x+hF7q+AfgK2+69phH6/qAm38biIAjmQhT39nCjpA52+RrZyUi/ucp5qmZyQ==',
    sha256: '733cf41fa4b4c65c4067113a4dd4597e7795f0323f1c542fa98e51492bc9beaf',
  },
  '0.18.0': {
    spec: '@lightprotocol/zk-compression-cli@0.18.0',
    integrity: 'sha512-83MWBuGldWHQwyxqjrntQAnXUdnOs7ud1QEH0TbhSkktjbtA0cJ8YggG66fZ+1i/mlkWuskwP3dagopNPyfXLQ==',
    sha256: '59ac615683ac7e45be3f1591ac5fcf63dc5a73731d7b958e0c67f11701318f2d',
  },
} as const);
export type LightCliVersion = keyof typeof LIGHT_CLI_PACKAGES;

/** One of Light's key files. */
export interface LightKeySpec {
  /** File name in `package/bin/proving-keys/` (and in a user's keys directory). */
  readonly file: string;
  /** Circuit name without `.key` (the resident file's stem). */
  readonly name: string;
  /** sha256 of the file, hex (spec §11). */
  readonly sha256: string;
  /** CLI package version that ships it. */
  readonly pkg: LightCliVersion;
  readonly kind: 'inclusion' | 'non-inclusion' | 'combined';
  /** 1 = legacy (heights 26, public roots/leaves), 2 = publicInputHash (heights 32 / 40). */
  readonly version: 1 | 2;
  readonly nAccounts: number;
  readonly nAddresses: number;
  readonly stateTreeHeight: number;
  readonly addressTreeHeight: number;
}

function spec(file: string, sha256: string, pkg: LightCliVersion): LightKeySpec {
  const name = file.replace(/\.key$/, '');
  let m: RegExpMatchArray | null;
  let s: Omit<LightKeySpec, 'file' | 'name' | 'sha256' | 'pkg'>;
  if ((m = name.match(/^(?:mainnet_)?inclusion_(26|32)_(\d+)$/))) {
    const h = Number(m[1]);
    s = { kind: 'inclusion', version: h === 26 ? 1 : 2, nAccounts: Number(m[2]), nAddresses: 0, stateTreeHeight: h, addressTreeHeight: 0 };
  } else if ((m = name.match(/^non-inclusion_(26|40)_(\d+)$/))) {
    const h = Number(m[1]);
    s = { kind: 'non-inclusion', version: h === 26 ? 1 : 2, nAccounts: 0, nAddresses: Number(m[2]), stateTreeHeight: 0, addressTreeHeight: h };
  } else if ((m = name.match(/^combined_26_(\d+)_(\d+)$/))) {
    s = { kind: 'combined', version: 1, nAccounts: Number(m[1]), nAddresses: Number(m[2]), stateTreeHeight: 26, addressTreeHeight: 26 };
  } else if ((m = name.match(/^combined_32_40_(\d+)_(\d+)$/))) {
    s = { kind: 'combined', version: 2, nAccounts: Number(m[1]), nAddresses: Number(m[2]), stateTreeHeight: 32, addressTreeHeight: 40 };
  } else throw new Error(`unknown Light key name ${file}`);
  return Object.freeze({ file, name, sha256, pkg, ...s });
}

/** The 24 keys Refract can use, pinned by sha256 (spec §11): 18 from CLI 0.27.0, 6 more v1 keys from 0.18.0. */
export const LIGHT_KEYS: readonly LightKeySpec[] = Object.freeze([
  spec('mainnet_inclusion_26_1.key', '7951975f09a04ff0b495002cdc415dd7fd1cdb89b2fd6e862092e6568da3cf17', '0.27.0'),
  spec('mainnet_inclusion_26_2.key', '1dd36df9e40eebbe2c5b5f372063cd006ecd942df7c120f81b888e5741ae62a9', '0.27.0'),
  spec('mainnet_inclusion_26_3.key', '1ff45534209b1d038b36da73b788caeb0340a923ced12853f4d40a8bbef342dc', '0.27.0'),
  spec('mainnet_inclusion_26_4.key', 'cbdf710a21b9b9f123f318f956c98766b0a6efb6207beb40e485717368dd4dfd', '0.27.0'),
  spec('non-inclusion_26_1.key', '0aa0e6e2e1deaa2d37699f24032428175ed3a3a27df338100838c611e84c01ef', '0.27.0'),
  spec('non-inclusion_26_2.key', 'f9f638f835869c31498d960934963d94a373b4839fa2fdd63cc974c57115beaa', '0.27.0'),
  spec('combined_26_1_1.key', '60030e66611099e7e0cd06173041639edc417be592b19a3ea57eadfa0a96fa53', '0.27.0'),
  spec('combined_26_1_2.key', 'd91c7f47621f2581b61d4579dff140ba315802dac941c0e98f854be354281e3b', '0.27.0'),
  spec('combined_26_2_1.key', '7ef022904c78de8c1da8bc45f7253f5d62b19e3a1782074c98f1d9004f59615e', '0.27.0'),
  spec('inclusion_32_1.key', '1b3af75f39878372e8a440c52e3480502e83267c17303bcfc1263385229eed69', '0.27.0'),
  spec('inclusion_32_2.key', '7ec1bef909f84eb9accad18dca5dbab9dab9010cfe4d1bc694f79c1c7009524a', '0.27.0'),
  spec('inclusion_32_3.key', '8f2b90d144f4b9b0f8b2a06847b63e03c0125e5f6e683ac1af8e7f5bb67ac579', '0.27.0'),
  spec('inclusion_32_4.key', 'ade3723798bfab9312fa629fa55d83799721a23a96f8ad50581db3fee554f3a0', '0.27.0'),
  spec('non-inclusion_40_1.key', '38741251ec9c5f6762992c9b67cd6ef85f58096e792b6b84af1262b251970373', '0.27.0'),
  spec('non-inclusion_40_2.key', '26b06e109cb1c06b0363a94735f34f490f9a7a3818606ad7b15eec7d00367252', '0.27.0'),
  spec('combined_32_40_1_1.key', 'c14d7bfbaa665919706454f87b549b262d0917097260009adaf16738ccf1a257', '0.27.0'),
  spec('combined_32_40_1_2.key', '6ba23c3f8d94dc8f1889e5b7cb2da8fcd2ecd87d35b3eb7a17ebe8b636e667ae', '0.27.0'),
  spec('combined_32_40_2_1.key', '5b761d71483b767ab8e32081716b421e9f052fabf409aaeaa3f3059981075063', '0.27.0'),
  spec('inclusion_26_8.key', '63a99cdc407997a20379eff33ab28700660fe65736f32f1157cbd82d63be3f64', '0.18.0'),
  spec('combined_26_2_2.key', '3e1308a2b1c1f307f7619a6ab6f681dc7fb2d9c76922af0fcf464b60c7368df1', '0.18.0'),
  spec('combined_26_3_1.key', 'd877eb7bef8551ef663053729c49b55210f60506ddddbf0dcca235f575cf7a2a', '0.18.0'),
  spec('combined_26_3_2.key', '92e0114ce40533ff564bb7962fe96aefbc7f7a18f9c991253769a69c9f349a84', '0.18.0'),
  spec('combined_26_4_1.key', '56092c7fd8a350b5b9f24d68a166846ca12be1584eb9c9a347b426f6778125f7', '0.18.0'),
  spec('combined_26_4_2.key', '00f5207765a028e238e9c7378ffb5b218d97dbe98e800c8c7afa1dd20c9d974f', '0.18.0'),
]);

/** The key spec for a file or circuit name (`mainnet_inclusion_26_1`, `…​.key`), or undefined. */
export function lightKeyByName(name: string): LightKeySpec | undefined {
  const stem = name.replace(/\.key$/, '');
  return LIGHT_KEYS.find((k) => k.name === stem);
}

/**
 * Prefix of a Light key's id in the proving pool and the proof queue (`light/<name>`, e.g.
 * `light/non-inclusion_26_1`): Light's names and Refract's own circuit ids overlap
 * (`non-inclusion_26_1` is both), so the pool, its threads and BullMQ jobs name a key by this id.
 */
export const LIGHT_KEY_ID_PREFIX = 'light/';

/** The pool / queue id of a Light key (`light/<name>`). */
export function lightKeyId(k: LightKeySpec): string {
  return LIGHT_KEY_ID_PREFIX + k.name;
}

/** The Light key a pool / queue id names, or undefined for any other id (an own circuit id). */
export function lightKeyOfId(id: string): LightKeySpec | undefined {
  return id.startsWith(LIGHT_KEY_ID_PREFIX) ? lightKeyByName(id.slice(LIGHT_KEY_ID_PREFIX.length)) : undefined;
}

/**
 * Kind and input counts of a pool / queue id: a Light key id (`light/<name>`) or an own circuit id.
 * @throws ProverError `unsupported_shape` for an unknown id
 */
export function keyShape(id: string): { kind: 'inclusion' | 'non-inclusion' | 'combined'; nAccounts: number; nAddresses: number } {
  const k = lightKeyOfId(id);
  if (k) return { kind: k.kind, nAccounts: k.nAccounts, nAddresses: k.nAddresses };
  const c = getCircuit(id);
  return { kind: c.kind, nAccounts: c.nAccounts, nAddresses: c.nAddresses };
}

/**
 * The Light key that serves these counts and heights (spec §6 routing), or undefined when Light
 * ships none (e.g. inclusion 26 × 5, v2 inclusion × 8).
 */
export function lightKeyFor(nAccounts: number, nAddresses: number, version: 1 | 2): LightKeySpec | undefined {
  return LIGHT_KEYS.find((k) => k.nAccounts === nAccounts && k.nAddresses === nAddresses && k.version === version);
}

/** Where the resident Light keys live: `<keysDir>/light`. */
export function lightKeysDir(keysDir: string): string {
  return path.join(path.resolve(keysDir), 'light');
}

/** Resident file of a key: `<keysDir>/light/<name>.lkr`. */
export function residentFile(keysDir: string, s: LightKeySpec): string {
  return path.join(lightKeysDir(keysDir), `${s.name}.lkr`);
}
