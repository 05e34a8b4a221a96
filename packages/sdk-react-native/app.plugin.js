// Expo looks for the config plugin here (app.json: "plugins": [["@attribution/sdk-react-native", {...}]]).
// Built from src/plugin/with-attribution.ts (`npm run build`).
module.exports = require('./dist/cjs/plugin/with-attribution.js').withAttribution;
