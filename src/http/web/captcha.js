/*
 * captcha.js - the CAPTCHA widget of a queue with a captcha (docs/API.md
 * 1.2, "A place costs work": the captcha field), for the queue page
 * (queue.js). It loads the provider's widget script once - Cloudflare
 * Turnstile or hCaptcha, as the server named it in data-captcha-script (a
 * test's loopback stand-in when the queue's verifyUrl is one) - renders
 * the widget in the element it is given, and hands each response to the
 * page, which joins with it ({"captchaResponse": ...}); the server verifies
 * it with the provider.
 *
 * Both providers have the same explicit rendering API: the script loaded
 * with ?render=explicit&onload=NAME calls window[NAME] when ready, then
 * turnstile.render(el, opts) / hcaptcha.render(el, opts) with opts
 * {sitekey, callback, 'error-callback', 'expired-callback'} returns a
 * widget id for reset(id). The page's Content-Security-Policy allows that
 * provider's origins on this queue's page only (the server sets it).
 *
 *   window.wrCaptcha.show(el, {provider, siteKey, script}, onToken, onError)
 *   window.wrCaptcha.reset()
 * onToken(response) for each response; onError() when the script does not
 * load or the widget fails (the page says so and tries again later).
 */
(function () {
  'use strict';

  var READY = 'wrCaptchaReady'; /* the onload callback's name */
  var waiting = null; /* [[done, fail]] while the script loads */
  var api = null;     /* window.turnstile or window.hcaptcha, once loaded */
  var widget = null;  /* the rendered widget's id */
  var shownIn = null; /* ... and its element */
  var handlers = null;

  function providerApi(provider) {
    var p = provider === 'hcaptcha' ? window.hcaptcha : window.turnstile;
    return p && typeof p.render === 'function' ? p : null;
  }

  function load(cfg, done, fail) {
    if (api) { done(); return; }
    if (waiting) { waiting.push([done, fail]); return; }
    waiting = [[done, fail]];
    var finish = function (ok) {
      if (!waiting) return; /* once */
      var list = waiting;
      waiting = null;
      api = ok ? providerApi(cfg.provider) : null;
      for (var i = 0; i < list.length; i++) (api ? list[i][0] : list[i][1])();
    };
    window[READY] = function () { finish(true); };
    var s = document.createElement('script');
    s.src = cfg.script + (cfg.script.indexOf('?') < 0 ? '?' : '&') + 'render=explicit&onload=' + READY;
    s.async = true;
    s.onerror = function () { finish(false); };
    /* a script that loaded but never called back: give it a moment */
    s.onload = function () {
      setTimeout(function () { finish(!!providerApi(cfg.provider)); }, 3000);
    };
    document.head.appendChild(s);
  }

  function reset() {
    if (!api || widget === null) return;
    try { api.reset(widget); } catch (e) { /* a widget gone */ }
  }

  function show(el, cfg, onToken, onError) {
    handlers = { token: onToken, error: onError };
    if (!el || !cfg || typeof cfg.siteKey !== 'string' || typeof cfg.script !== 'string') {
      onError();
      return;
    }
    load(cfg, function () {
      if (widget !== null && shownIn === el) { reset(); return; } /* a fresh response */
      try {
        widget = api.render(el, {
          sitekey: cfg.siteKey,
          callback: function (response) {
            if (handlers && typeof response === 'string' && response) handlers.token(response);
          },
          'error-callback': function () { if (handlers) handlers.error(); },
          'expired-callback': function () { reset(); }
        });
        shownIn = el;
      } catch (e) {
        onError();
      }
    }, onError);
  }

  window.wrCaptcha = { show: show, reset: reset };
})();
