/*
 * push.js - "notify me when it's my turn" with Web Push (docs/API.md 1.3,
 * "Your turn, off the page"), for queue.js. Loaded before it (both
 * deferred); the page's strings and rendering stay queue.js's.
 *
 * Where the browser has a service worker and PushManager and the queue
 * has push on (GET .../push/key answers 200), window.wrPush.available is
 * true and queue.js's notify button subscribes through it: the
 * permission, the service worker /static/push-sw.js registered for the
 * queue pages (scope /q/, allowed by the server's Service-Worker-Allowed),
 * the browser's subscription with the queue's key, then PUT
 * .../entries/me/push with the page's language. Subscribed
 * (wrPush.subscribed), the page says so and follows the server's
 * retryAfterMs, which is no longer capped for presence: fewer polls.
 * A page loaded again by someone subscribed before (permission granted, a
 * subscription in the registration) sends it again and shows it at once.
 * iOS Safari outside a Home Screen app has no PushManager: wrPush.iosHint
 * is true (queue.js shows "add to Home Screen first").
 * Every change dispatches the "wr-push" event on document.
 */
(function () {
  'use strict';
  var app = document.getElementById('app');
  var queue = app ? app.dataset.queue : '';
  var P = window.wrPush = { available: false, subscribed: false, iosHint: false, failed: false };
  function changed() {
    try { document.dispatchEvent(new Event('wr-push')); } catch (e) { /* very old browsers */ }
  }
  var ios = /iP(hone|ad|od)/.test(navigator.userAgent) ||
    (navigator.platform === 'MacIntel' && navigator.maxTouchPoints > 1);
  var supported = 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;
  if (!queue || !app || app.dataset.preview === '1') return;
  var base = '/v1/queues/' + encodeURIComponent(queue);
  var key = null;
  if (!supported) {
    P.iosHint = ios; /* Safari on iOS: push only for Home Screen apps */
    if (ios) {
      fetch(base + '/push/key', { credentials: 'same-origin' }).then(function (r) {
        if (r.status === 200) changed(); else P.iosHint = false;
      }, function () { P.iosHint = false; });
    }
    return;
  }
  function b64u(s) {
    var b = atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4));
    var out = new Uint8Array(b.length);
    for (var i = 0; i < b.length; i++) out[i] = b.charCodeAt(i);
    return out;
  }
  fetch(base + '/push/key', { credentials: 'same-origin' }).then(function (r) {
    return r.status === 200 ? r.json() : null;
  }).then(function (body) {
    if (!body || !body.publicKey) return;
    key = body.publicKey;
    P.available = true;
    changed();
    resume();
  }, function () { /* push stays off */ });

  /* The PUT of the browser's subscription (lang: the page's language). */
  function put(sub, lang) {
    var json = typeof sub.toJSON === 'function' ? sub.toJSON() : sub;
    var body = { endpoint: json.endpoint, keys: json.keys };
    if (lang) body.lang = lang;
    return fetch(base + '/entries/me/push', {
      method: 'PUT', credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body)
    }).then(function (r) {
      if (r.status !== 204) throw new Error('status ' + r.status);
      P.subscribed = true;
      changed();
      return true;
    });
  }

  /* A reload, or a page opened again, of someone who subscribed before:
   * the browser's subscription is sent again (the store may have dropped
   * it: a leave, a new place) and the page shows it, without a click. */
  function resume() {
    if (Notification.permission !== 'granted' || !navigator.serviceWorker.getRegistration) return;
    navigator.serviceWorker.getRegistration('/q/' + encodeURIComponent(queue)).then(function (reg) {
      return reg && reg.pushManager ? reg.pushManager.getSubscription() : null;
    }).then(function (sub) {
      if (sub) return put(sub, document.documentElement.lang || '');
    }).catch(function () { /* the button stays */ });
  }

  /* Subscribes (lang: the page's language); cb() after every change. */
  P.subscribe = function (lang) {
    if (!P.available || !key) return Promise.resolve(false);
    P.failed = false;
    var perm = Notification.requestPermission();
    return Promise.resolve(perm).then(function (p) {
      if ((p || Notification.permission) !== 'granted') throw new Error('permission');
      return navigator.serviceWorker.register('/static/push-sw.js', { scope: '/q/' });
    }).then(function (reg) {
      return reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: b64u(key) });
    }).then(function (sub) {
      return put(sub, lang);
    }).catch(function () {
      P.failed = true;
      changed();
      return false;
    });
  };
})();
