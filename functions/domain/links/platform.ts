import { UAParser } from 'ua-parser-js';

/**
 * The store a visitor can install from, read from the user agent with ua-parser-js.
 *
 * - ios: iPhone, iPad and iPod, including the in-app browsers of Facebook, Instagram and TikTok
 *   (their user agents keep the iOS token).
 * - android: Android phones and tablets, in-app browsers and WebViews included.
 * - desktop: everything else, i.e. every platform without a store destination of ours.
 *
 * iPadOS Safari (13 and later) sends the Mac user agent ("Macintosh; Intel Mac OS X 10_15_7")
 * and the server has no touch information to tell them apart, so an iPad in Safari is desktop:
 * it gets the web URL, and a mobile_only link drops it. The web page can detect the iPad
 * (navigator.maxTouchPoints > 1) and forward to the App Store. See docs/tracking-links.md.
 */
export type Platform = 'ios' | 'android' | 'desktop';

export function platformOf(userAgent: string): Platform {
  const os = new UAParser(userAgent).getOS().name;
  if (os === 'iOS') return 'ios';
  if (os === 'Android' || os === 'Android-x86') return 'android';
  return 'desktop';
}
