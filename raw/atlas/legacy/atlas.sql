-- Atlas hub: druhy hub, přepsané ručně z webu (verze 3)
CREATE TABLE Mushrooms (name TEXT, latin TEXT, status TEXT, grow_from INTEGER, grow_to INTEGER,
                        mushroom_info TEXT, grow_info TEXT);
BEGIN TRANSACTION;
INSERT INTO Mushrooms VALUES ('Hřib smrkový', 'Boletus edulis', 'jedlá', 6, 11,
    'Klobouk hnědý, rourky bílé, později žlutozelené; dužnina bílá, nemodrá.', 'Smrkové a bukové lesy.');
INSERT INTO Mushrooms VALUES ('Hřib dubový', 'Boletus reticulatus', 'jedlá', 5, 9,
    'Klobouk světle hnědý, třeň se světlou síťkou po celé délce.', 'Listnaté lesy pod duby a buky.');
INSERT INTO Mushrooms VALUES ('Hřib kovář', 'Boletus erythropus', 'jedlá', 5, 10,
    'Třeň s červenými tečkami, dužnina na řezu okamžitě modrá.', 'Jehličnaté lesy na kyselých půdách.');
INSERT INTO Mushrooms VALUES ('Hřib koloděj', 'Suillellus luridus', 'jedovatá', 6, 9,
    'Třeň se sytě červenou síťkou; syrový je jedovatý, jedlý až po důkladném tepelném zpracování.', 'Listnaté lesy a parky na vápnitých půdách.');
INSERT INTO Mushrooms VALUES ('Hřib hnědý', 'Xerocomus badius', 'jedlá', 7, 11,
    'Klobouk kaštanově hnědý, za vlhka lepkavý; rourky po otlačení modrají.', 'Jehličnaté lesy, hlavně smrčiny.');
INSERT INTO Mushrooms VALUES ('Hřib plstnatý', 'Xerocomus subtomentosus', 'jedlá', 6, 10,
    'Klobouk olivově hnědý, plstnatý; rourky žluté.', 'Listnaté i jehličnaté lesy.');
INSERT INTO Mushrooms VALUES ('Liška obecná', 'Cantharellus cibarius', 'jedlá', 6, 10,
    'Celá plodnice vaječně žlutá, místo lupenů vidličnaté lišty.', 'Smrkové a borové lesy.');
INSERT INTO Mushrooms VALUES ('Stroček trubkovitý', 'Craterellus cornucopioides', 'jedlá', 8, 10,
    'Nálevkovitá šedočerná plodnice, uvnitř dutá.', 'Bučiny, v trsech ve spadaném listí.');
INSERT INTO Mushrooms VALUES ('Lišák zprohýbaný', 'Hydnum repandum', 'jedlá', 8, 11,
    'Na spodní straně klobouku křehké ostny místo lupenů.', 'Listnaté i jehličnaté lesy.');
INSERT INTO Mushrooms VALUES ('Kotrč kadeřavý', 'Sparassis crispa', 'jedlá', 8, 10,
    'Kulovitá plodnice z kadeřavých lístků připomínající houbu na mytí.', 'U pat borovic.');
INSERT INTO Mushrooms VALUES ('Smrž obecný', 'Morchella esculenta', 'jedlá', 4, 5,
    'Klobouk s voštinovitými jamkami, uvnitř dutý.', 'Světlé listnaté lesy, zahrady, břehy potoků.');
INSERT INTO Mushrooms VALUES ('Klouzek obecný', 'Suillus luteus', 'jedlá', 6, 11,
    'Slizký hnědý klobouk, na třeni blanitý prsten.', 'Pod borovicemi.');
INSERT INTO Mushrooms VALUES ('Klouzek sličný', 'Suillus grevillei', 'jedlá', 6, 10,
    'Klobouk zlatožlutý až oranžový, slizký; prsten bělavý.', 'Výhradně pod modříny.');
INSERT INTO Mushrooms VALUES ('Klouzek kravský', 'Suillus bovinus', 'jedlá', 8, 11,
    'Klobouk okrový, rourky široké, hranaté.', 'Borové lesy na písčitých půdách.');
INSERT INTO Mushrooms VALUES ('Choroš šupinatý', 'Polyporus squamosus', 'jedlá', 5, 8,
    'Velký vějířovitý klobouk s hnědými šupinami; jedlý jen mladý.', 'Na kmenech listnáčů, hlavně javorů a jilmů.');
INSERT INTO Mushrooms VALUES ('Bedla vysoká', 'Macrolepiota procera', 'jedlá', 7, 10,
    'Vysoký hadovitě žíhaný třeň s posuvným prstenem, klobouk se šupinami.', 'Okraje lesů, paseky.');
INSERT INTO Mushrooms VALUES ('Václavka obecná', 'Armillaria mellea', 'jedlá', 9, 11,
    'Roste v trsech; syrová je jedovatá, jedlá po povaření.', 'Na pařezech a kořenech listnáčů.');
INSERT INTO Mushrooms VALUES ('Hlíva ústřičná', 'Pleurotus ostreatus', 'jedlá', 10, 3,
    'Bokem přirostlý šedohnědý klobouk, lupeny sbíhavé.', 'Na kmenech listnáčů, roste i v zimě.');
INSERT INTO Mushrooms VALUES ('Pýchavka obecná', 'Lycoperdon perlatum', 'jedlá', 6, 10,
    'Hruškovitá plodnice s bradavkami; jedlá jen dokud je uvnitř bílá.', 'Lesy všeho druhu.');
INSERT INTO Mushrooms VALUES ('Kozák březový', 'Leccinum scabrum', 'jedlá', 6, 10,
    'Třeň s tmavými šupinkami, klobouk hnědý.', 'Pod břízami.');
INSERT INTO Mushrooms VALUES ('Křemenáč osikový', 'Leccinum aurantiacum', 'jedlá', 6, 10,
    'Klobouk oranžově červený, dužnina na řezu černá.', 'Pod osikami.');
INSERT INTO Mushrooms VALUES ('Ryzec pravý', 'Lactarius deliciosus', 'jedlá', 8, 10,
    'Roní mrkvově oranžové mléko, na otlacích zelená.', 'Pod borovicemi na vápnitých půdách.');
INSERT INTO Mushrooms VALUES ('Holubinka namodralá', 'Russula cyanoxantha', 'jedlá', 6, 10,
    'Klobouk modrofialový až zelený, lupeny pružné, nelámou se.', 'Listnaté i smíšené lesy.');
INSERT INTO Mushrooms VALUES ('Čirůvka fialová', 'Lepista nuda', 'jedlá', 9, 12,
    'Celá plodnice fialová, s ovocnou vůní.', 'Lesy, kompost, spadané jehličí.');
INSERT INTO Mushrooms VALUES ('Čirůvka májovka', 'Calocybe gambosa', 'jedlá', 4, 6,
    'Bělavá masitá plodnice s moučnou vůní.', 'Louky, meze, okraje křovin.');
INSERT INTO Mushrooms VALUES ('Špička obecná', 'Marasmius oreades', 'jedlá', 5, 10,
    'Drobný klobouk s hrbolem, houževnatý třeň.', 'Louky a pastviny, v kruzích.');
INSERT INTO Mushrooms VALUES ('Penízovka sametonohá', 'Flammulina velutipes', 'jedlá', 10, 3,
    'Klobouk medově žlutý, třeň sametově hnědý; roste v zimě.', 'Na dřevě listnáčů, hlavně vrb.');
INSERT INTO Mushrooms VALUES ('Chřapáč kadeřavý', 'Helvella crispa', 'jedlá', 8, 10,
    'Bílá kadeřavá čepice na rýhovaném třeni; syrový je jedovatý.', 'Listnaté lesy, okraje cest.');
INSERT INTO Mushrooms VALUES ('Sírovec žlutooranžový', 'Laetiporus sulphureus', 'jedlá', 5, 9,
    'Střechovité sírově žluté plodnice; jedlé jen mladé okraje.', 'Na kmenech dubů, vrb a třešní.');
INSERT INTO Mushrooms VALUES ('Žampion ovčí', 'Agaricus arvensis', 'jedlá', 6, 10,
    'Bílý klobouk žloutnoucí otlakem, vůně po anýzu.', 'Louky a pastviny.');
INSERT INTO Mushrooms VALUES ('Hnojník obecný', 'Coprinus comatus', 'jedlá', 5, 11,
    'Protáhlý bílý klobouk se šupinami, stářím se rozplývá v inkoust.', 'Trávníky, okraje cest.');
INSERT INTO Mushrooms VALUES ('Muchomůrka zelená', 'Amanita phalloides', 'jedovatá', 7, 10,
    'Klobouk olivově zelený, třeň s prstenem a blanitou pochvou.', 'Listnaté lesy pod duby a buky.');
INSERT INTO Mushrooms VALUES ('Muchomůrka červená', 'Amanita muscaria', 'jedovatá', 7, 11,
    'Červený klobouk s bílými bradavkami.', 'Pod břízami a smrky.');
INSERT INTO Mushrooms VALUES ('Muchomůrka tygrovaná', 'Amanita pantherina', 'jedovatá', 6, 10,
    'Hnědý klobouk s bílými bradavkami, hlízka s lemem.', 'Listnaté i jehličnaté lesy.');
INSERT INTO Mushrooms VALUES ('Muchomůrka jízlivá', 'Amanita virosa', 'jedovatá', 7, 10,
    'Celá plodnice čistě bílá, třeň šupinkatý.', 'Vlhké jehličnaté lesy.');
INSERT INTO Mushrooms VALUES ('Pavučinec plyšový', 'Cortinarius orellanus', 'jedovatá', 8, 10,
    'Oranžově hnědý plstnatý klobouk; jed působí až po dnech.', 'Teplé listnaté lesy.');
INSERT INTO Mushrooms VALUES ('Čechratka podvinutá', 'Paxillus involutus', 'jedlá', 7, 10,
    'Podvinutý okraj klobouku, lupeny hnědnou otlakem.', 'Lesy všeho druhu.');
INSERT INTO Mushrooms VALUES ('Závojenka olovová', 'Entoloma sinuatum', 'jedovatá', 8, 10,
    'Velký bělavý klobouk, lupeny nažloutlé, pak růžové.', 'Listnaté lesy na zásaditých půdách.');
INSERT INTO Mushrooms VALUES ('Hřib satan', 'Rubroboletus satanas', 'jedovatá', 7, 9,
    'Bělavý klobouk, červené póry, dužnina slabě modrá.', 'Teplé doubravy na vápenci.');
INSERT INTO Mushrooms VALUES ('Čirůvka tygrovaná', 'Tricholoma pardinum', 'jedovatá', 8, 10,
    'Šedý klobouk s tmavými šupinkami.', 'Bučiny a jedliny na vápenci.');
INSERT INTO Mushrooms VALUES ('Třepenitka svazčitá', 'Hypholoma fasciculare', 'jedovatá', 5, 12,
    'Sírově žluté trsy na pařezech, chuť hořká.', 'Na pařezech listnáčů i jehličnanů.');
INSERT INTO Mushrooms VALUES ('Hřib žlučník', 'Tylopilus felleus', 'nejedlá', 6, 10,
    'Podobný hřibu smrkovému, ale rourky růžové a chuť hořká.', 'Jehličnaté lesy.');
INSERT INTO Mushrooms VALUES ('Hřib hořký', 'Caloboletus calopus', 'nejedlá', 7, 10,
    'Třeň červený se síťkou, dužnina modrá a hořká.', 'Horské jehličnaté lesy.');
INSERT INTO Mushrooms VALUES ('Muchomůrka porfyrová', 'Amanita porphyria', 'nejedlá', 8, 10,
    'Šedohnědý klobouk, prsten šedý, vůně po syrových bramborách.', 'Jehličnaté lesy.');
INSERT INTO Mushrooms VALUES ('Holubinka vrhavka', 'Russula emetica', 'nejedlá', 7, 10,
    'Jasně červený klobouk, bílé lupeny, chuť palčivá.', 'Vlhké jehličnaté lesy, rašeliniště.');
INSERT INTO Mushrooms VALUES ('Lysohlávka kopinatá', 'Psilocybe semilanceata', 'jedovatá', 8, 11,
    'Drobná houba se špičatým kloboučkem.', 'Pastviny a louky.');
COMMIT;
