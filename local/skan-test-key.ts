import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { TEST_KEYS_VARIABLE } from '../functions/domain/skan/postback-keys';

/**
 * Fixed P-256 key pairs the local runtime alone trusts beside Apple's keys, so the simulator can
 * send SKAdNetwork 4 and AdAttributionKit postbacks that verify (Apple's private keys being
 * Apple's). Generated once with node:crypto and committed: they are public on purpose and guard
 * nothing. The runtime gives skan-postback their public halves through SKAN_TEST_KEYS
 * (local/function-context.ts); the stack never sets it (test/stack checks), so in AWS a postback
 * signed with these is invalid like any other forgery.
 */

/** Signs SKAdNetwork postbacks (2.1 and later: Apple's P-256 versions). */
export const SKADNETWORK_TEST_PRIVATE_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgBg7BNGNU2NG3ig+Z
J5O61wRik4O/wgA8+PE0UpuVJLmhRANCAASOHK5JA0SCpZKuaj1S71OXh/LnggJR
ZuF77WzHf/DnoiX3bB9EKe113+JCcO29sJmZcgThjVv7ay4rPklnTdht
-----END PRIVATE KEY-----
`;
export const SKADNETWORK_TEST_PUBLIC_KEY = `-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEjhyuSQNEgqWSrmo9Uu9Tl4fy54IC
UWbhe+1sx3/w56Il92wfRCntdd/iQnDtvbCZmXIE4Y1b+2suKz5JZ03YbQ==
-----END PUBLIC KEY-----
`;

/** The AdAttributionKit JWS header's kid for the test key: it verifies as a production key. */
export const ADATTRIBUTIONKIT_TEST_KID = 'local-test-identifier/0';
export const ADATTRIBUTIONKIT_TEST_PRIVATE_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg6ijOiyyObpfQ8QdY
igKei2vH8o2bbNNkdZJVfQxWb5KhRANCAARzZG6pWKsqJT5K9rMHonXrI5FWtwWT
UuH8dLEwSf02TpCIjMiSCTb6Kt0wU3CdICPzJVyCkRt0xBb2IDz6xl9G
-----END PRIVATE KEY-----
`;
export const ADATTRIBUTIONKIT_TEST_PUBLIC_KEY = `-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEc2RuqVirKiU+SvazB6J16yORVrcF
k1Lh/HSxMEn9Nk6QiIzIkgk2+irdMFNwnSAj8yVcgpEbdMQW9iA8+sZfRg==
-----END PUBLIC KEY-----
`;

export const skadnetworkTestPrivateKey = (): KeyObject => createPrivateKey(SKADNETWORK_TEST_PRIVATE_KEY);
export const adAttributionKitTestPrivateKey = (): KeyObject => createPrivateKey(ADATTRIBUTIONKIT_TEST_PRIVATE_KEY);

const base64Der = (pem: string) => createPublicKey(pem).export({ type: 'spki', format: 'der' }).toString('base64');

/** SKAN_TEST_KEYS's value: the public halves, as functions/domain/skan/postback-keys.ts testKeysOf reads them. */
export function skanTestKeysValue(): string {
  return JSON.stringify({
    skadnetwork: base64Der(SKADNETWORK_TEST_PUBLIC_KEY),
    adattributionkit: [{ kid: ADATTRIBUTIONKIT_TEST_KID, key: base64Der(ADATTRIBUTIONKIT_TEST_PUBLIC_KEY) }],
  });
}

/** Variables the local runtime gives one function beyond what the stack gives it: the test keys, to skan-postback only. */
export const LOCAL_ONLY_VARIABLES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  'skan-postback': { [TEST_KEYS_VARIABLE]: skanTestKeysValue() },
};
