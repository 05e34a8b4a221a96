import type { Random } from './random';

/**
 * Who clicks and installs: real user agents of current phones, in-app browsers, desktops and
 * crawlers; countries with the consumer networks people browse from; and the hosting networks
 * click farms run in. Plain data, so a reader sees at a glance what the simulator pretends to be.
 */

export const IOS_AGENTS = [
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_6_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_6_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/485.1.0.45.110;FBBV/665337277;FBDV/iPhone15,2;FBMD/iPhone;FBSN/iOS;FBSV/17.6.1;FBSS/3;FBCR/;FBID/phone;FBLC/en_US;FBOP/80]',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 356.0.0.20.89 (iPhone16,2; iOS 18_1; en_US; en; scale=3.00; 1290x2796; 656284389; IABMV/1)',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 musical_ly_36.5.0 JsSdk/2.0 NetType/WIFI Channel/App Store ByteLocale/en Region/US FalconTag/ RevealType/Dialog isDarkMode/0 WKWebView/1 BytedanceWebview/d8a21c6',
  'Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
] as const;

export const ANDROID_AGENTS = [
  'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (Linux; Android 14; SM-S918B Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/130.0.6723.107 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/490.0.0.50.81;]',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240905.003; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/129.0.6668.100 Mobile Safari/537.36 Instagram 352.0.0.38.100 Android (34/14; 420dpi; 1080x2205; Google/google; Pixel 8; shiba; shiba; en_US; 645357392)',
  'Mozilla/5.0 (Linux; Android 13; SM-A536B Build/TP1A.220624.014; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/128.0.6613.146 Mobile Safari/537.36 trill_2023609030 JsSdk/1.0 NetType/WIFI Channel/googleplay AppName/trill app_version/36.9.3 ByteLocale/en ByteFullLocale/en Region/US BytedanceWebview/d8a21c6',
  'Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-A546B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36',
] as const;

export const DESKTOP_AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0',
  // Also what iPadOS Safari sends by default: the service sends it to the web URL (docs/tracking-links.md).
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
] as const;

/** Crawlers and scripts: every one names itself, so the link's bot filter drops it. */
export const BOT_AGENTS = [
  'Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.69 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)',
  'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
  'curl/8.5.0',
  'python-requests/2.32.3',
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36',
] as const;

/** Countries people click from, weighted, with consumer networks there (13335: iCloud Private Relay). */
export const COUNTRIES: Readonly<Record<string, { weight: number; asns: readonly number[] }>> = {
  US: { weight: 38, asns: [7922, 7018, 21928, 13335] },
  GB: { weight: 9, asns: [2856, 5089] },
  DE: { weight: 9, asns: [3320, 3209] },
  FR: { weight: 7, asns: [3215, 12322] },
  BR: { weight: 10, asns: [28573, 26599] },
  IN: { weight: 12, asns: [55836, 45609] },
  JP: { weight: 8, asns: [2516, 4713] },
  CA: { weight: 7, asns: [812, 577] },
};

/** Hosting networks (AWS, DigitalOcean, Hetzner, OVH, Google Cloud): click farms, not people. */
export const DATA_CENTRE_ASNS = [16509, 14061, 24940, 16276, 396982] as const;

const RESERVED_FIRST_OCTETS = new Set([0, 10, 100, 127, 169, 172, 192, 198, 203, 224]);

/**
 * Addresses that are each the only one in their IPv4 /24 or IPv6 /48, so one person never spends
 * another's rate-limit allowance and a probabilistic match can only be their own click.
 */
export class AddressBook {
  private readonly blocks = new Set<string>();

  constructor(private readonly random: Random) {}

  person(): string {
    return this.random.chance(0.1) ? this.v6() : this.v4();
  }

  /** A fresh /24, for a click flood. */
  v4Block(): string {
    for (;;) {
      let first = this.random.int(11, 223);
      while (RESERVED_FIRST_OCTETS.has(first)) first = this.random.int(11, 223);
      const block = `${first}.${this.random.int(0, 255)}.${this.random.int(0, 255)}`;
      if (this.take(block)) return block;
    }
  }

  private v4(): string {
    return `${this.v4Block()}.${this.random.int(2, 254)}`;
  }

  private v6(): string {
    // Groups without leading zeros: the spelling the service stores (RFC 5952).
    const group = () => this.random.int(1, 0xffff).toString(16);
    for (;;) {
      const block = `2a0${this.random.int(1, 9)}:${group()}:${group()}`;
      if (this.take(block)) return `${block}:${group()}::${group()}`;
    }
  }

  private take(block: string): boolean {
    if (this.blocks.has(block)) return false;
    this.blocks.add(block);
    return true;
  }
}
