// A click on the notice that a read ended brings back a tab of the app, showing that run.
self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const url = event.notification.data && event.notification.data.url;
  event.waitUntil(
    (async () => {
      const tabs = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
      const tab = tabs.find((t) => url && t.url === url) || tabs[0];
      if (tab) return tab.focus();
      if (url) return self.clients.openWindow(url);
    })(),
  );
});
