/**
 * The console's one HTML page, served by the local console (console/server.ts, with its run's
 * token) and, in AWS, from the console bucket (lib/constructs/console-site.ts, with the sign-in
 * settings the page reads: console/ui/sign-in.ts).
 */
export function consolePage(meta: Readonly<Record<string, string>>): string {
  const metas = Object.entries(meta)
    .map(([name, content]) => `<meta name="${name}" content="${content.replace(/[&"<>]/g, (c) => `&#${c.charCodeAt(0)};`)}">\n`)
    .join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${metas}<title>Attribution console</title>
<link rel="stylesheet" href="/assets/console.css">
<link rel="icon" href="data:,">
</head>
<body>
<div id="console"></div>
<script src="/assets/console.js"></script>
</body>
</html>
`;
}
