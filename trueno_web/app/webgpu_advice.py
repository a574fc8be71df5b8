"""How to turn WebGPU on, per browser, for the demo page's no-WebGPU banner.

The page shows the one line for the browser it runs in (web/app.mjs picks the key from
navigator.userAgentData / navigator.userAgent) and the others behind an "other browsers" disclosure.
"""

# (key, browser, advice): the keys web/app.mjs's browserKey() returns; "other" last, for any browser.
ENABLE_WEBGPU = (
    (
        "chrome-linux",
        "Chrome or Edge on Linux",
        "open chrome://flags/#enable-unsafe-webgpu (and #enable-vulkan), enable, relaunch "
        "(or start Chrome with --enable-unsafe-webgpu).",
    ),
    (
        "chrome-desktop",
        "Chrome or Edge on Windows, macOS or ChromeOS",
        "version 113+ has it on: update the browser, and check chrome://gpu that WebGPU is not disabled.",
    ),
    ("chrome-android", "Chrome on Android", "version 121+ has it on (Android 12+): update Chrome."),
    ("safari", "Safari", "Safari 26 has it on; earlier: Develop > Feature Flags > WebGPU."),
    (
        "firefox",
        "Firefox",
        "141+ on Windows has it on; elsewhere set dom.webgpu.enabled in about:config (Nightly).",
    ),
    ("other", "Other browsers", "use Chrome or Edge 113+, Safari 26 or Firefox 141+ on Windows."),
)


def advice() -> list[dict]:
    """ENABLE_WEBGPU as the page gets it: [{key, browser, text}, ...]."""
    return [{"key": k, "browser": b, "text": t} for k, b, t in ENABLE_WEBGPU]
