/*
 * push-sw.js - the queue pages' service worker (docs/API.md 1.3, "Your
 * turn, off the page"), registered by push.js with scope /q/: shows the
 * push's notification (its title and body, in the subscriber's language,
 * from the server) and, on a click, focuses the queue's page or opens it
 * (the push's url, /q/<queue>), which shows the pass.
 */
'use strict';
self.addEventListener('push', function (event) {
  var d = {};
  try { d = event.data ? event.data.json() : {}; } catch (e) { d = {}; }
  var title = d.title || 'Waiting room';
  event.waitUntil(self.registration.showNotification(title, {
    body: d.body || '',
    tag: 'wr-' + (d.queue || ''),
    renotify: true,
    requireInteraction: d.status === 'admitted',
    data: { url: typeof d.url === 'string' && d.url.charAt(0) === '/' ? d.url : '/' }
  }));
});

self.addEventListener('notificationclick', function (event) {
  event.notification.close();
  var url = (event.notification.data && event.notification.data.url) || '/';
  event.waitUntil(self.clients.matchAll({ type: 'window', includeUncontrolled: true }).then(function (list) {
    for (var i = 0; i < list.length; i++) {
      var w = list[i];
      if (new URL(w.url).pathname === url && 'focus' in w) return w.focus();
    }
    return self.clients.openWindow(url);
  }));
});
