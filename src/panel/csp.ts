/**
 * The panel's Content-Security-Policy, one definition for the extension's page and the test
 * harness: nothing by default, scripts only with the page's nonce, styles and fonts only from the
 * extension, images from the extension or data: URLs. No remote content.
 */
export function panelCsp(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${cspSource} 'nonce-${nonce}'`,
    `font-src ${cspSource}`,
    `img-src ${cspSource} data:`,
  ].join('; ');
}
