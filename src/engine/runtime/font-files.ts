// The font files of the families the reference renderer bundles (npm @fontsource, Latin subset,
// the same faces it embeds), inlined into the page runtime as base64 by esbuild so the player and
// renders have them without any server of their own. Only fonts.ts reads this table.
import inter400 from "@fontsource/inter/files/inter-latin-400-normal.woff2";
import inter700 from "@fontsource/inter/files/inter-latin-700-normal.woff2";
import inter900 from "@fontsource/inter/files/inter-latin-900-normal.woff2";
import montserrat400 from "@fontsource/montserrat/files/montserrat-latin-400-normal.woff2";
import montserrat700 from "@fontsource/montserrat/files/montserrat-latin-700-normal.woff2";
import montserrat900 from "@fontsource/montserrat/files/montserrat-latin-900-normal.woff2";
import outfit400 from "@fontsource/outfit/files/outfit-latin-400-normal.woff2";
import outfit700 from "@fontsource/outfit/files/outfit-latin-700-normal.woff2";
import outfit900 from "@fontsource/outfit/files/outfit-latin-900-normal.woff2";
import nunito400 from "@fontsource/nunito/files/nunito-latin-400-normal.woff2";
import nunito700 from "@fontsource/nunito/files/nunito-latin-700-normal.woff2";
import nunito900 from "@fontsource/nunito/files/nunito-latin-900-normal.woff2";
import oswald400 from "@fontsource/oswald/files/oswald-latin-400-normal.woff2";
import oswald700 from "@fontsource/oswald/files/oswald-latin-700-normal.woff2";
import leagueGothic400 from "@fontsource/league-gothic/files/league-gothic-latin-400-normal.woff2";
import archivoBlack400 from "@fontsource/archivo-black/files/archivo-black-latin-400-normal.woff2";
import spaceMono400 from "@fontsource/space-mono/files/space-mono-latin-400-normal.woff2";
import spaceMono700 from "@fontsource/space-mono/files/space-mono-latin-700-normal.woff2";
import ibmPlexMono400 from "@fontsource/ibm-plex-mono/files/ibm-plex-mono-latin-400-normal.woff2";
import ibmPlexMono700 from "@fontsource/ibm-plex-mono/files/ibm-plex-mono-latin-700-normal.woff2";
import jetbrainsMono400 from "@fontsource/jetbrains-mono/files/jetbrains-mono-latin-400-normal.woff2";
import jetbrainsMono700 from "@fontsource/jetbrains-mono/files/jetbrains-mono-latin-700-normal.woff2";
import ebGaramond400 from "@fontsource/eb-garamond/files/eb-garamond-latin-400-normal.woff2";
import ebGaramond700 from "@fontsource/eb-garamond/files/eb-garamond-latin-700-normal.woff2";
import playfairDisplay400 from "@fontsource/playfair-display/files/playfair-display-latin-400-normal.woff2";
import playfairDisplay700 from "@fontsource/playfair-display/files/playfair-display-latin-700-normal.woff2";
import playfairDisplay900 from "@fontsource/playfair-display/files/playfair-display-latin-900-normal.woff2";
import sourceCodePro400 from "@fontsource/source-code-pro/files/source-code-pro-latin-400-normal.woff2";
import sourceCodePro700 from "@fontsource/source-code-pro/files/source-code-pro-latin-700-normal.woff2";
import roboto400 from "@fontsource/roboto/files/roboto-latin-400-normal.woff2";
import roboto700 from "@fontsource/roboto/files/roboto-latin-700-normal.woff2";
import roboto900 from "@fontsource/roboto/files/roboto-latin-900-normal.woff2";
import openSans400 from "@fontsource/open-sans/files/open-sans-latin-400-normal.woff2";
import openSans700 from "@fontsource/open-sans/files/open-sans-latin-700-normal.woff2";
import lato400 from "@fontsource/lato/files/lato-latin-400-normal.woff2";
import lato700 from "@fontsource/lato/files/lato-latin-700-normal.woff2";
import lato900 from "@fontsource/lato/files/lato-latin-900-normal.woff2";
import poppins400 from "@fontsource/poppins/files/poppins-latin-400-normal.woff2";
import poppins700 from "@fontsource/poppins/files/poppins-latin-700-normal.woff2";
import poppins900 from "@fontsource/poppins/files/poppins-latin-900-normal.woff2";

/** Base64 woff2 data of each face, by family slug and weight. */
export const BUNDLED_FONT_FILES: Record<string, Record<number, string>> = {
  inter: { 400: inter400, 700: inter700, 900: inter900 },
  montserrat: { 400: montserrat400, 700: montserrat700, 900: montserrat900 },
  outfit: { 400: outfit400, 700: outfit700, 900: outfit900 },
  nunito: { 400: nunito400, 700: nunito700, 900: nunito900 },
  oswald: { 400: oswald400, 700: oswald700 },
  "league-gothic": { 400: leagueGothic400 },
  "archivo-black": { 400: archivoBlack400 },
  "space-mono": { 400: spaceMono400, 700: spaceMono700 },
  "ibm-plex-mono": { 400: ibmPlexMono400, 700: ibmPlexMono700 },
  "jetbrains-mono": { 400: jetbrainsMono400, 700: jetbrainsMono700 },
  "eb-garamond": { 400: ebGaramond400, 700: ebGaramond700 },
  "playfair-display": { 400: playfairDisplay400, 700: playfairDisplay700, 900: playfairDisplay900 },
  "source-code-pro": { 400: sourceCodePro400, 700: sourceCodePro700 },
  roboto: { 400: roboto400, 700: roboto700, 900: roboto900 },
  "open-sans": { 400: openSans400, 700: openSans700 },
  lato: { 400: lato400, 700: lato700, 900: lato900 },
  poppins: { 400: poppins400, 700: poppins700, 900: poppins900 },
};
