// The browser and platform the page runs in, as the key of the no-WebGPU banner's advice
// ("chrome-linux", "chrome-desktop", "chrome-android", "safari", "firefox" or "other"; the advice itself
// is trueno_web/app/webgpu_advice.py's). A navigator-like object can be passed in to test it.

export function browserKey(nav = navigator) {
  const ua = nav.userAgent || "";
  const brands = ((nav.userAgentData && nav.userAgentData.brands) || []).map((b) => b.brand).join(" ");
  const platform = (nav.userAgentData && nav.userAgentData.platform) || ua;
  if (/Firefox\//.test(ua)) return "firefox";
  const chromium = /Chrom(e|ium)|Edg/.test(brands) || /Chrom(e|ium)\/|Edg\//.test(ua);
  if (chromium && /Android/i.test(platform + ua)) return "chrome-android";
  if (chromium && /Linux|X11/i.test(platform) && !/CrOS|Chrome OS/i.test(platform + ua)) return "chrome-linux";
  if (chromium) return "chrome-desktop";
  if (/Safari\//.test(ua) && /Apple/.test(nav.vendor || "")) return "safari";
  return "other";
}

